package check

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// BenchmarkCheckFiles is the streaming check's speed: events per second
// over a history read from disk, gzip'd, as `lockbench check` reads it,
// and its allocations per event.
// LOCKBENCH_BENCH_HISTORY names a history to check instead of a synthetic
// one (e.g. one of `run --keys 64 -c 64 -d 30s --history DIR/`).
func BenchmarkCheckFiles(b *testing.B) {
	path := os.Getenv("LOCKBENCH_BENCH_HISTORY")
	if path == "" {
		path = filepath.Join(b.TempDir(), "h.jsonl.gz")
		h := synth(synthOpts{seed: 9, workers: 64, keys: 64, sections: 40000, generators: 1, recordOutcomes: true, bufMin: 32, bufSize: 64})
		if err := writeHistory(path, h); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	var events int64
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for b.Loop() {
		rep, err := CheckFiles([]string{path}, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if rep.reread {
			b.Fatal("reread, not streamed")
		}
		events = rep.Trailer.Events
	}
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(events*int64(b.N)), "allocs/event")
}
