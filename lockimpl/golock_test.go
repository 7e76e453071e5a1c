package lockimpl_test

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/lockimpl"
)

// TestGoLocksCheck: a program's set of Go locks is refused, with the
// reason, when a lock has no usable name, no constructor, a backend other
// than Redis, or a name given twice.
func TestGoLocksCheck(t *testing.T) {
	build := func([]redis.Cmdable) (lockimpl.Locker, error) { return &lockimpl.NullLock{}, nil }
	lock := func(name, backend string) lockimpl.GoLock {
		return lockimpl.GoLock{Descriptor: lockimpl.Descriptor{Name: name, Backend: backend}, New: build}
	}
	for _, tc := range []struct {
		name  string
		locks lockimpl.GoLocks
		want  string
	}{
		{"none", nil, ""},
		{"two", lockimpl.GoLocks{lock("a", ""), lock("b.2", lockimpl.BackendRedis)}, ""},
		{"no name", lockimpl.GoLocks{lock("", "")}, `name "": accepted`},
		{"space", lockimpl.GoLocks{lock("a b", "")}, `name "a b": accepted`},
		{"twice", lockimpl.GoLocks{lock("a", ""), lock("a", "")}, "Go lock a: registered twice"},
		{"etcd", lockimpl.GoLocks{lock("a", lockimpl.BackendEtcd)}, `backend "etcd": a Go lock runs on Redis`},
		{"no constructor", lockimpl.GoLocks{{Descriptor: lockimpl.Descriptor{Name: "a"}}}, "no constructor"},
	} {
		err := tc.locks.Check()
		if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestGoLocksBuild: New builds go:NAME from the locks the context
// carries, reported under that name with the fencing registered; an
// unregistered name is refused naming the registered ones.
func TestGoLocksBuild(t *testing.T) {
	g := lockimpl.GoLocks{{Descriptor: lockimpl.Descriptor{Name: "mine", Fencing: true},
		New: func([]redis.Cmdable) (lockimpl.Locker, error) { return &lockimpl.NullLock{}, nil }}}
	opts := lockimpl.Options{Go: lockimpl.GoLocksIn(lockimpl.WithGoLocks(context.Background(), g))}
	l, err := lockimpl.New("go:mine", nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	if info := l.Info(); info.Name != "go:mine" || !info.Fencing {
		t.Errorf("info %+v: want name go:mine, fencing", info)
	}
	if _, err := lockimpl.New("go:other", nil, opts); err == nil || !strings.Contains(err.Error(), "this program registers go:mine") {
		t.Errorf("go:other: %v", err)
	}
	if d, ok := lockimpl.Describe("go:mine"); !ok || d.Backend != lockimpl.BackendRedis || !d.Lease {
		t.Errorf("Describe(go:mine) = %+v, %v", d, ok)
	}
	if d, ok := g.Find("go:mine"); !ok || d.Descriptor.Name != "go:mine" || !d.Descriptor.Fencing {
		t.Errorf("Find(go:mine) = %+v, %v", d.Descriptor, ok)
	}
}
