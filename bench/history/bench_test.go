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

// BenchmarkParseEvent is the line parser's cost per event, on lines as
// AppendEvent writes them (ns/op is per line).
func BenchmarkParseEvent(b *testing.B) {
	events := []Event{
		{Worker: 3, Key: 17, Op: OpAcquire, Out: OutOK, Window: true, Call: 31002174068, Return: 31002374068, Token: "0123456789abcdef", Valid: 41002374068},
		{Worker: 3, Key: 17, Op: OpEnter, Out: OutOK, Window: true, Call: 31002474068, Return: 31002474068, Token: "0123456789abcdef", Valid: 41002374068,
			Granted: 31002374068, Seq: 123456},
		{Worker: 3, Key: 17, Op: OpWrite, Out: OutOK, Window: true, Call: 31002574068, Return: 31002574068, Token: "0123456789abcdef", Valid: 41002374068, Seq: 123457},
		{Worker: 3, Key: 17, Op: OpRelease, Out: OutOK, Window: true, Call: 31002674068, Return: 31002774068, Token: "0123456789abcdef"},
	}
	var lines [][]byte
	for i := range events {
		l := AppendEvent(nil, &events[i])
		lines = append(lines, l[:len(l)-1])
	}
	toks := &tokenCache{}
	var e Event
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if !parseEvent(lines[i%len(lines)], &e, toks) {
			b.Fatal("refused")
		}
	}
}
