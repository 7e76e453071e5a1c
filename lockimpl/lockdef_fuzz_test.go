package lockimpl_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/lockimpl"
)

// FuzzParseLockDef: any input parses or is refused with one line, never a panic.
func FuzzParseLockDef(f *testing.F) {
	for _, name := range append(slices.Clone(shippedDefs), quorumDefs...) {
		b, err := os.ReadFile(filepath.Join("defs", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(okRelease))
	f.Add([]byte("quorum: majority\nacquire: {command: [SET, \"{key}\", x, NX], reply: {granted: OK, held: nil}}\n" + okRelease))
	f.Add([]byte("quorum: minority\n" + okRelease))
	f.Add([]byte("name: d\ndriver: \"python3 'my driver.py' --x\"\n"))
	f.Add([]byte("acquire: {command: [SET, \"{{{key}}}\", \"}}\"], reply: {granted: positive, held: 0, fence: reply}}\n" + okRelease))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := lockimpl.ParseLockDef(b)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error of more than one line: %q", err)
			}
			return
		}
		if d.Name == "" {
			t.Fatalf("parsed definition without a name")
		}
	})
}
