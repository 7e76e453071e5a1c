package job

import (
	"bytes"
	"compress/gzip"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/results"
)

// memSink keeps each history in memory, as kept or dropped.
type memSink struct {
	kept    map[string][]byte
	dropped []string
	opened  int
}

type memWriter struct {
	s  *memSink
	id string
	b  bytes.Buffer
	// done counts Keep and Drop: exactly one is owed.
	done int
}

func (w *memWriter) Write(p []byte) (int, error) { return w.b.Write(p) }
func (w *memWriter) Keep() error {
	w.done++
	w.s.kept[w.id] = w.b.Bytes()
	return nil
}
func (w *memWriter) Drop() { w.done++; w.s.dropped = append(w.s.dropped, w.id) }

func (s *memSink) sink(writers *[]*memWriter) HistorySink {
	return func(id string) (HistoryWriter, error) {
		s.opened++
		w := &memWriter{s: s, id: id}
		*writers = append(*writers, w)
		return w, nil
	}
}

// collectInto runs CollectWith over logs into a fresh memSink and checks
// that every writer it opened was told Keep or Drop exactly once.
func collectInto(t testing.TB, logs string) (Collected, *memSink, error) {
	t.Helper()
	s := &memSink{kept: map[string][]byte{}}
	var ws []*memWriter
	c, err := CollectWith(strings.NewReader(logs), s.sink(&ws))
	for _, w := range ws {
		if w.done != 1 {
			t.Fatalf("history of %s: told Keep or Drop %d times, want once", w.id, w.done)
		}
	}
	return c, s, err
}

// gzipped is b as a gzip stream.
func gzipped(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// podLog is what a pod of renewal-check prints: its result, then its
// history, each between its markers.
func podLog(t testing.TB, id string, history []byte) string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteMarked(&b, &results.Result{Schema: results.Schema, ID: id, History: "/tmp/runs/" + id + ".history.jsonl.gz"}); err != nil {
		t.Fatal(err)
	}
	if err := WriteMarkedHistory(&b, id, bytes.NewReader(history)); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// prefixedLog puts kubectl logs --prefix's pod name before every line.
func prefixedLog(pod, log string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(log, "\n") {
		if line != "" {
			b.WriteString("[pod/" + pod + "/trial] " + line)
		}
	}
	return b.String()
}

// Histories ride beside their results, with and without kubectl's
// --prefix, in lines no longer than a result's, and come back byte for
// byte; results without a history (a scenario pod's) are collected as
// before; Collect alone skips the histories.
func TestMarkedHistoriesRoundTrip(t *testing.T) {
	// Incompressible bytes: several lines of base64, and a last one short.
	h1, h2 := gzipped(t, randomBytes(3*markedLine+17)), gzipped(t, []byte("{\"schema\":\"lockbench-history/v1\"}\n"))
	var scenarioPod bytes.Buffer
	if err := WriteMarked(&scenarioPod, &results.Result{Schema: results.Schema, ID: "r3"}); err != nil {
		t.Fatal(err)
	}
	one := podLog(t, "r1", h1)
	for _, line := range strings.Split(one, "\n") {
		if len(line) > markedLine {
			t.Fatalf("a line of %d bytes", len(line))
		}
	}
	for name, logs := range map[string]string{
		"plain":    "starting\n" + one + podLog(t, "r2", h2) + scenarioPod.String(),
		"prefixed": prefixedLog("x-0", one) + prefixedLog("x-1", podLog(t, "r2", h2)) + prefixedLog("x-2", scenarioPod.String()),
	} {
		t.Run(name, func(t *testing.T) {
			c, s, err := collectInto(t, logs)
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Results) != 3 || c.Results[0].ID != "r1" || c.Results[2].ID != "r3" {
				t.Fatalf("results %v: want r1, r2, r3", ids(c.Results))
			}
			if !c.Histories["r1"] || !c.Histories["r2"] || c.Histories["r3"] || len(s.dropped) > 0 {
				t.Errorf("histories %v, dropped %v: want r1's and r2's kept", c.Histories, s.dropped)
			}
			if !bytes.Equal(s.kept["r1"], h1) || !bytes.Equal(s.kept["r2"], h2) {
				t.Errorf("the histories did not come back byte for byte")
			}
			rs, err := Collect(strings.NewReader(logs))
			if err != nil || len(rs) != 3 {
				t.Errorf("Collect: %v, %v: want the 3 results, the histories skipped", ids(rs), err)
			}
		})
	}
}

// randomBytes are n incompressible bytes (seeded: the same each run).
func randomBytes(n int) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range b {
		b[i] = byte(r.IntN(256))
	}
	return b
}

func ids(rs []*results.Result) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.ID)
	}
	return out
}

// A history that did not come whole is dropped with its run's result, the
// error naming the run and what was wrong, while the other runs are
// collected; a history whose result is not in the logs is dropped too.
func TestMarkedHistoryCut(t *testing.T) {
	h := gzipped(t, randomBytes(2*markedLine))
	good := podLog(t, "ok-run", gzipped(t, []byte("fine\n")))
	full := podLog(t, "cut-run", h)
	lines := strings.SplitAfter(full, "\n")
	if len(lines) < 6 {
		t.Fatalf("the history is %d lines: want several", len(lines))
	}
	endAt := strings.Index(full, HistoryEndMarker("cut-run"))
	for name, tc := range map[string]struct {
		logs, want string
	}{
		"end of logs":       {good + full[:endAt], "is cut off by the end of the logs"},
		"half a line":       {good + full[:endAt-100], "is cut off by the end of the logs"},
		"another pod after": {full[:endAt] + good, "stops at log line"},
		"a line lost":       {good + strings.Join(append(lines[:len(lines)-4:len(lines)-4], lines[len(lines)-3:]...), ""), "not a whole gzip stream"},
		"not base64":        {good + strings.Replace(full, HistoryEndMarker("cut-run"), "not base64 at all!\n"+HistoryEndMarker("cut-run"), 1), "not base64"},
		"empty":             {good + strings.Split(full, HistoryBeginMarker("cut-run"))[0] + HistoryBeginMarker("cut-run") + "\n" + HistoryEndMarker("cut-run") + "\n", "is empty"},
		"no result":         {good + full[strings.Index(full, HistoryBeginMarker("cut-run")):], "its result is not"},
		"result after":      {full[strings.Index(full, HistoryBeginMarker("cut-run")):endAt] + good, "stops at log line"},
	} {
		t.Run(name, func(t *testing.T) {
			c, s, err := collectInto(t, tc.logs)
			if err == nil || !strings.Contains(err.Error(), "run cut-run: its history") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v: want one naming run cut-run and %q", err, tc.want)
			}
			if len(c.Results) != 1 || c.Results[0].ID != "ok-run" || !c.Histories["ok-run"] || c.Histories["cut-run"] {
				t.Errorf("results %v, histories %v: want ok-run's alone", ids(c.Results), c.Histories)
			}
			if _, kept := s.kept["cut-run"]; kept {
				t.Errorf("cut-run's history was kept")
			}
		})
	}
}

// A run id that could name a file outside the sink's directory is not a
// run id: its history is skipped, never handed to the sink.
func TestMarkedHistoryBadRunID(t *testing.T) {
	logs := HistoryBeginMarker("../../etc/x") + "\nAAAA\n" + HistoryEndMarker("../../etc/x") + "\n"
	c, s, err := collectInto(t, logs)
	if err == nil || !strings.Contains(err.Error(), "not a run id") || s.opened != 0 || len(c.Histories) != 0 {
		t.Errorf("error %v, %d opened: want it refused, none opened", err, s.opened)
	}
	if err := WriteMarkedHistory(&bytes.Buffer{}, "a/b", strings.NewReader("")); err == nil {
		t.Error("WriteMarkedHistory took run id a/b")
	}
}

// FuzzCollectHistories: whatever the logs, every writer opened is told
// Keep or Drop once, a kept history is a whole gzip stream whose result
// was collected, and no run id names a path.
func FuzzCollectHistories(f *testing.F) {
	f.Add(podLog(f, "r1", gzipped(f, []byte("h\n"))))
	f.Add(prefixedLog("p", podLog(f, "r1", gzipped(f, []byte("h\n")))))
	f.Add(HistoryBeginMarker("r") + "\nH4sI\n" + HistoryEndMarker("r") + "\n")
	f.Add(BeginMarker + "\n" + HistoryBeginMarker("r") + "\n" + EndMarker + "\n")
	f.Fuzz(func(t *testing.T, logs string) {
		c, s, _ := collectInto(t, logs)
		has := map[string]bool{}
		for _, r := range c.Results {
			if r.Schema != results.Schema || r.ID == "" {
				t.Fatalf("collected %+v", r)
			}
			has[r.ID] = true
		}
		for id := range c.Histories {
			if !has[id] || !ValidRunID(id) {
				t.Fatalf("history of %q kept: results %v", id, ids(c.Results))
			}
			zr, err := gzip.NewReader(bytes.NewReader(s.kept[id]))
			if err == nil {
				_, err = io.Copy(io.Discard, zr)
			}
			if err != nil {
				t.Fatalf("kept history of %s is not whole gzip: %v", id, err)
			}
		}
	})
}
