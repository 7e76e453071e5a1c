package renewal

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
		_, ls, err := Select("process-paused", "single,"+lock)
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
	if _, _, err := Select("all", "exec:sh -c 'x"); err == nil || !strings.Contains(err.Error(), "unclosed") {
		t.Errorf("a driver command that does not parse: err = %v", err)
	}
}
