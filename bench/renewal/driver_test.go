package renewal

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/lockimpl"
)

// TestSelectTakesDriverLocks: a driver lock named in --locks gets a column
// on single, fenced as its hello says; one whose hello says it does not
// renew has every case n/a, saying why.
func TestSelectTakesDriverLocks(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		hello          string
		fenced, renews bool
	}{
		{`{"op":"hello","v":1,"name":"r","renews":true,"fences":true,"waits":false}`, true, true},
		{`{"op":"hello","v":1,"name":"n","renews":false,"fences":false,"waits":false}`, false, false},
	} {
		f := filepath.Join(dir, "hello")
		if err := os.WriteFile(f, []byte(tc.hello+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		lock := "exec:sh -c 'read h; cat " + f + "; read r'"
		_, ls, err := Select("process-paused", "single,"+lock, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(ls) != 2 || ls[1].Name != lock || ls[1].Topology != "single" || ls[1].Fencing != tc.fenced {
			t.Fatalf("locks = %+v", ls)
		}
		ok, why := All()[0].Applies(ls[1])
		if ok != tc.renews || !tc.renews && !strings.Contains(why, "renews: false") {
			t.Errorf("%s: applies = %v, %q", tc.hello, ok, why)
		}
	}
	if _, _, err := Select("all", "exec:sh -c 'x", nil); err == nil || !strings.Contains(err.Error(), "unclosed") {
		t.Errorf("a driver command that does not parse: err = %v", err)
	}
}

// TestSelectTakesGoLocks: a Go lock the program registered gets a column
// on single, fenced and renewing as its descriptor says; a name it did not
// register is bad input naming the ones it did.
func TestSelectTakesGoLocks(t *testing.T) {
	own := lockimpl.GoLocks{
		{Descriptor: lockimpl.Descriptor{Name: "mine", Lease: true, Renewable: true, Fencing: true}},
		{Descriptor: lockimpl.Descriptor{Name: "fixed", Lease: true}},
	}
	_, ls, err := Select("process-paused", "go:mine,go:fixed", own)
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != 2 || ls[0].Name != "go:mine" || !ls[0].Fencing || ls[0].NoRenewal != "" || ls[1].NoRenewal == "" {
		t.Fatalf("locks = %+v", ls)
	}
	if ok, why := All()[1].Applies(ls[1]); ok || !strings.Contains(why, "registered not renewable") {
		t.Errorf("a Go lock registered not renewable: applies %v, %q", ok, why)
	}
	for _, tc := range []struct {
		own  lockimpl.GoLocks
		want string
	}{
		{own, "go:other: not a registered Go lock; this program registers go:mine, go:fixed"},
		{nil, "go:other: not a registered Go lock; none is registered in this program"},
	} {
		if _, _, err := Select("all", "go:other", tc.own); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("err = %v, want %q", err, tc.want)
		}
	}
}
