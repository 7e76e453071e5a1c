package plan

import (
	"strings"
	"testing"

	"github.com/lockbench/lockbench/compose"
)

func TestEtcdPlans(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    Values
		bad  string // the flag the error must name; "" for none
	}{
		{name: "etcd:3 defaults to the etcd lock", v: Values{"topology": {"etcd:3"}}},
		{name: "external members", v: Values{"topology": {"etcd:3"}, "etcd": {"http://a:2379", "https://u:pw@b", "http://c:1"}}},
		{name: "kill leader", v: Values{"topology": {"etcd:3"}, "fault": {"at=1s kill leader"}, "duration": {"3s"}}},
		{name: "partition a member", v: Values{"topology": {"etcd:3"}, "fault": {"at=1s partition node=1 for=1s"}, "duration": {"3s"}}},
		{name: "a Redis lock on etcd", v: Values{"topology": {"etcd:3"}, "lock": {"single"}}, bad: "lock"},
		{name: "the etcd lock on Redis", v: Values{"topology": {"redlock:3"}, "lock": {"etcd"}}, bad: "lock"},
		{name: "etcd:2", v: Values{"topology": {"etcd:2"}}, bad: "topology"},
		{name: "ttl under a second", v: Values{"topology": {"etcd:1"}, "ttl": {"500ms"}}, bad: "ttl"},
		{name: "ttl not whole seconds", v: Values{"topology": {"etcd:1"}, "ttl": {"2500ms"}}, bad: "ttl"},
		{name: "ttl under a local cluster's minimum", v: Values{"topology": {"etcd:3"}, "ttl": {"1s"}}, bad: "ttl"},
		{name: "a lone member's minimum", v: Values{"topology": {"etcd:1"}, "ttl": {"1s"}}},
		{name: "--etcd on Redis", v: Values{"etcd": {"http://a:2379"}}, bad: "etcd"},
		{name: "--redis on etcd", v: Values{"topology": {"etcd:1"}, "redis": {"redis://a:6379"}}, bad: "redis"},
		{name: "bad --etcd URL", v: Values{"topology": {"etcd:1"}, "etcd": {"redis://a:1"}}, bad: "etcd"},
		{name: "URL count", v: Values{"topology": {"etcd:3"}, "etcd": {"http://a:1"}}, bad: "etcd"},
		{name: "kill leader on Redis", v: Values{"topology": {"replicated"}, "fault": {"at=1s kill leader"}, "duration": {"3s"}}, bad: "fault"},
		{name: "clock on etcd", v: Values{"topology": {"etcd:3"}, "fault": {"at=1s clock-jump node=0 +5s"}, "duration": {"3s"}}, bad: "fault"},
		{name: "kill an external member", v: Values{"topology": {"etcd:1"}, "etcd": {"http://a:1"}, "fault": {"at=1s kill node=0"}, "duration": {"3s"}}, bad: "fault"},
		{name: "Redis persistence on etcd", v: Values{"topology": {"etcd:1"}, "persistence": {"aof-always"}}, bad: "persistence"},
		{name: "pool size on etcd", v: Values{"topology": {"etcd:1"}, "pool-size": {"4"}}, bad: "pool-size"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plans, err := Expand(tc.v)
			switch {
			case tc.bad == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.bad != "" && (err == nil || !IsInputError(err) || !strings.HasPrefix(err.Error(), "--"+tc.bad+":")):
				t.Fatalf("got %v, want an input error naming --%s", err, tc.bad)
			case tc.bad != "" && (strings.Contains(err.Error(), "pw") || strings.Contains(err.Error(), "\n")):
				t.Fatalf("error %q shows a password or is not one line", err)
			case tc.bad == "" && (plans[0].Lock != "etcd" || plans[0].Topology.Kind != compose.KindEtcd):
				t.Fatalf("plan %s on %s", plans[0].Lock, plans[0].Topology)
			}
		})
	}
}

func TestEtcdURLRedactedInConfig(t *testing.T) {
	plans, err := Expand(Values{"topology": {"etcd:1"}, "etcd": {"https://root:s3cret@h:2379"}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := plans[0].Values.Config()
	if got := cfg["etcd"].([]string)[0]; strings.Contains(got, "s3cret") {
		t.Fatalf("config shows the password: %q", got)
	}
}
