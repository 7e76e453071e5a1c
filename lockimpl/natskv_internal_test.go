package lockimpl

import (
	"errors"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// natsKVKey is what a NATS KV key may hold (the client's own check).
var natsKVKey = regexp.MustCompile(`^[-/_=a-zA-Z0-9]+$`)

func TestNatsKey(t *testing.T) {
	cases := []struct{ key, want string }{
		{"lockbench:run:k1", "lockbench=3Arun=3Ak1"},
		{"a/b-c_d", "a/b-c_d"},
		{"x.y=z", "x=2Ey=3Dz"},
		{"ü", "=C3=BC"},
	}
	for _, c := range cases {
		if got := natsKey(c.key); got != c.want {
			t.Errorf("natsKey(%q) = %q, want %q", c.key, got, c.want)
		}
		if back, ok := natsKeyDecode(c.want); !ok || back != c.key {
			t.Errorf("natsKeyDecode(%q) = %q, %v", c.want, back, ok)
		}
	}
	for _, bad := range []string{"a=", "a=3", "a=ZZ", "=G1"} {
		if k, ok := natsKeyDecode(bad); ok {
			t.Errorf("natsKeyDecode(%q) = %q, want refused", bad, k)
		}
	}
}

// FuzzNatsKey: every lock key (user input: --key-prefix, key specs) maps to
// a valid KV key that maps back to it.
func FuzzNatsKey(f *testing.F) {
	for _, s := range []string{"lockbench:r:k", "", "=", "a.b", "\x00\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		k := natsKey(key)
		if key != "" && !natsKVKey.MatchString(k) {
			t.Fatalf("natsKey(%q) = %q: not a valid KV key", key, k)
		}
		if back, ok := natsKeyDecode(k); !ok || back != key {
			t.Fatalf("round trip of %q: %q, %v", key, back, ok)
		}
	})
}

func TestZkErrorKind(t *testing.T) {
	cases := []struct {
		err  error
		want string
	}{
		{fmt.Errorf("acquire k: %w", zk.ErrConnectionClosed), "zk_connection_closed"},
		{fmt.Errorf("acquire k: %w", zk.ErrSessionExpired), "zk_session_expired"},
		{fmt.Errorf("acquire k: %w (StateDisconnected)", ErrZkNoSession), "zk_no_session"},
		{errors.New("other"), ""},
		{nil, ""},
	}
	for _, c := range cases {
		if got := ZkErrorKind(c.err); got != c.want {
			t.Errorf("ZkErrorKind(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}

func TestZkSortBySequence(t *testing.T) {
	kids := []string{"lock-ff-0000000003", "lock-aa-0000000010", "lock-zz-0000000001"}
	sortBySequence(kids)
	want := []string{"lock-zz-0000000001", "lock-ff-0000000003", "lock-aa-0000000010"}
	if fmt.Sprint(kids) != fmt.Sprint(want) {
		t.Fatalf("sorted %v, want %v", kids, want)
	}
}

func TestParseNatsTTL(t *testing.T) {
	cases := []struct {
		raw  string
		want time.Duration
		ok   bool
	}{
		{"1s", time.Second, true},
		{"2", 2 * time.Second, true},
		{"1m30s", 90 * time.Second, true},
		{"never", NoExpiry, true},
		{"", 0, false},
		{"-3", 0, false},
		{"soon", 0, false},
	}
	for _, c := range cases {
		got, err := parseNatsTTL(c.raw)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("parseNatsTTL(%q) = %v, %v; want %v, ok %v", c.raw, got, err, c.want, c.ok)
		}
	}
}
