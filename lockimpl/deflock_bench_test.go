package lockimpl_test

import (
	"path/filepath"
	"testing"

	"github.com/lockbench/lockbench/compose/composetest"
	"github.com/lockbench/lockbench/lockimpl"
)

// BenchmarkDefSingleCPURatio sets the client CPU of defs/single.yaml (the
// built-in single's protocol, defined by file) beside the built-in single's,
// as issue 48 bounds it (at most 1.1×): 16 workers acquire and release keys
// of their own against one local redis-server, each lock b.N pairs, the
// built-in and the definition in turn, twice each (ABAB) so that a machine
// growing busier mid-run moves both. cpu-ratio is the definition's CPU over
// the built-in's; each side's µs per pair is reported too. "+pipe" runs
// both over --pipeline auto's pipe.
func BenchmarkDefSingleCPURatio(b *testing.B) {
	def, err := filepath.Abs(filepath.Join("defs", "single.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	server := composetest.Servers(b, 1)[0]
	for _, mode := range []string{"raw", "pipe"} {
		b.Run(mode, func(b *testing.B) {
			c := composetest.Client(b, server)
			opts := lockimpl.Options{}
			if mode == "pipe" {
				opts.Pipe = &lockimpl.PipeOptions{}
			}
			build := func(name string) lockimpl.Locker {
				l, err := lockimpl.New(name, lockimpl.Nodes(c), opts)
				if err != nil {
					b.Fatal(err)
				}
				return l
			}
			builtin, byFile := build(lockimpl.LockSingle), build(lockimpl.DefPrefix+def)
			defer closeLocker(builtin)
			defer closeLocker(byFile)
			var ours, theirs float64
			for range 2 {
				theirs += float64(pairsCPU(b, builtin, 16))
				ours += float64(pairsCPU(b, byFile, 16))
			}
			b.ReportMetric(theirs/2e3/float64(b.N), "builtin-cpu-µs/pair")
			b.ReportMetric(ours/2e3/float64(b.N), "def-cpu-µs/pair")
			b.ReportMetric(ours/theirs, "cpu-ratio")
		})
	}
}

// closeLocker closes l when it holds connections of its own.
func closeLocker(l lockimpl.Locker) {
	if c, ok := l.(interface{ Close() error }); ok {
		_ = c.Close()
	}
}
