package sweep

import (
	"testing"

	"github.com/lockbench/lockbench/bench/plan"
)

func TestLockCostTakesEtcd(t *testing.T) {
	spec, err := ParseLockSpec("etcd@etcd:3")
	if err != nil || spec != (LockSpec{"etcd", "etcd:3"}) {
		t.Fatalf("ParseLockSpec(etcd@etcd:3) = %+v, %v", spec, err)
	}
	base := plan.Values{"node-timeout": {"5ms"}, "duration": {"5s"}}
	cp := CostPlan{Locks: []LockSpec{{"redlock", "redlock:3"}, spec}, Base: base, Count: 1, WithFault: true}
	if err := cp.Check(); err != nil {
		t.Fatalf("redlock beside etcd, with faults: %v", err)
	}
	v, err := cp.values(spec, true)
	if err != nil || v.Get("fault") != "at=1s kill leader" {
		t.Fatalf("etcd's canonical fault: %v, %v", v["fault"], err)
	}
	cp = CostPlan{Locks: []LockSpec{spec}, Base: plan.Values{"redis": {"redis://h:6379"}}, Count: 1}
	if err := cp.Check(); err == nil || !plan.IsInputError(err) {
		t.Fatalf("etcd beside --redis servers: %v, want an input error", err)
	}
	if got := DefaultTTLs([]string{"single", "etcd:3"}); got != "2s,4s,8s" {
		t.Errorf("tune-ttl TTLs on etcd: %s", got)
	}
}
