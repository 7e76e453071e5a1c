package history

import (
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkAdd is the history's cost per event: a worker's Add (the hot
// path) with the writer goroutine encoding and gzipping to a file on disk
// as it goes. ns/op is the wall time per event with both running.
func BenchmarkAdd(b *testing.B) {
	w, err := Create(filepath.Join(b.TempDir(), "h.jsonl.gz"), Header{Origin: time.Now()}, 1)
	if err != nil {
		b.Fatal(err)
	}
	buf := w.Buffer(0)
	e := Event{Key: 17, Op: OpEnter, Out: OutOK, Window: true, Token: "0123456789abcdef0123456789abcdef", Valid: 123456789, Granted: 12345678}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		e.Call, e.Return, e.Seq = int64(i)*1000, int64(i)*1000+700, uint64(i)
		buf.Add(e)
	}
	if err := w.Close(nil, Trailer{}); err != nil {
		b.Fatal(err)
	}
}
