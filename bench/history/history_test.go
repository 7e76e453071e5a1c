package history

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/klauspost/compress/gzip"
)

// TestWriteReadRoundTrip writes a history and reads it back, gzip'd and
// plain: the file's name says which, and its first bytes must agree.
func TestWriteReadRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		gzip bool
	}{{"h.jsonl.gz", true}, {"h.jsonl", false}, {"h.json", false}} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), tc.name)
			roundTrip(t, path)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if gz := bytes.HasPrefix(b, []byte{0x1f, 0x8b}); gz != tc.gzip {
				t.Errorf("%s: gzip'd %v, want %v", tc.name, gz, tc.gzip)
			}
		})
	}
}

// roundTrip writes a history to path and reads it back: what workers add
// comes back field by field, from every worker's buffer, across many
// flushes, with faults and the trailer.
func roundTrip(t *testing.T, path string) {
	t.Helper()
	origin := time.Now()
	w, err := Create(path, Header{RunID: "r1", Generator: 2, Generators: 3, Origin: origin, KeyPrefix: "lockbench:r1:", Lock: "fenced",
		Fencing: true, TTLNS: int64(time.Second), DriftNS: int64(DriftAllowance(time.Second)), Resource: "in-process"}, 3)
	if err != nil {
		t.Fatal(err)
	}
	var want []Event
	for i := range 5000 {
		e := Event{Key: i % 7, Op: Op(1 + i%8), Out: Outcome(1 + i%8), Window: i%3 != 0, Call: int64(i) * 1000, Return: int64(i)*1000 + 500,
			Token: "0123456789abcdef0123456789abcdef", Fence: int64(i % 5), Valid: int64(i) * 2000, Seq: uint64(i + 1)}
		if e.Op == OpEnter {
			e.Granted = int64(i) * 900
		}
		if e.Out == OutFailed {
			e.Err = `odd "kind"`
		}
		w.Buffer(i % 3).Add(e)
		e.Generator, e.Worker = 2, i%3
		want = append(want, e)
	}
	faults := []Fault{{Spec: "at=1s kill primary", Node: "primary (127.0.0.1:1)", StartNS: 1e9}}
	if err := w.Close(faults, Trailer{WindowStartNS: 5, WindowEndNS: 9, Partial: true}); err != nil {
		t.Fatal(err)
	}
	h, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if h.Header.RunID != "r1" || h.Header.Schema != Schema || !h.Header.Origin.Equal(origin) || h.Header.Generator != 2 {
		t.Fatalf("header %+v", h.Header)
	}
	if len(h.Events) != len(want) {
		t.Fatalf("%d events, want %d", len(h.Events), len(want))
	}
	byCall := map[int64]Event{}
	for _, e := range h.Events {
		byCall[e.Call] = e
	}
	for _, e := range want {
		if got := byCall[e.Call]; !reflect.DeepEqual(got, e) {
			t.Fatalf("event\n got %+v\nwant %+v", got, e)
		}
	}
	if !reflect.DeepEqual(h.Faults, faults) || h.Trailer == nil || h.Trailer.Events != 5000 || !h.Trailer.Partial || h.Trailer.WindowEndNS != 9 {
		t.Fatalf("faults %+v trailer %+v", h.Faults, h.Trailer)
	}
}

func TestReadRefusesWhatIsNotAHistory(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"empty", "", "no header"},
		{"a result file", `{"schema":"lockbench/v1"}`, "want lockbench-history/v1"},
		{"a newer history", `{"schema":"lockbench-history/v9"}`, "this lockbench reads"},
		{"no header", `{"g":0,"w":0,"key":1,"op":"enter","out":"ok"}`, "no schema"},
		{"unknown op", `{"schema":"lockbench-history/v1"}` + "\n" + `{"key":1,"op":"jump","out":"ok"}`, `unknown op "jump"`},
		{"no key", `{"schema":"lockbench-history/v1"}` + "\n" + `{"op":"enter","out":"ok"}`, "without a key"},
		{"not json", `{"schema":"lockbench-history/v1"}` + "\n" + `garbage`, "line 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(tc.text))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestMergeMovesTimesToOneOrigin(t *testing.T) {
	o := time.Now()
	a := &History{Header: Header{RunID: "r", Generator: 0, Origin: o}, Events: []Event{{Generator: 0, Key: 1, Op: OpEnter, Call: 10, Return: 10, Granted: 5, Valid: 100}},
		Trailer: &Trailer{Events: 1}}
	b := &History{Header: Header{RunID: "r", Generator: 1, Origin: o.Add(time.Second)}, Events: []Event{{Generator: 1, Key: 1, Op: OpEnter, Call: 10, Return: 10, Granted: 5, Valid: 100}},
		Trailer: &Trailer{Events: 1}}
	m, err := Merge([]*History{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Events) != 2 || m.Events[1].Call != 1e9+10 || m.Events[1].Granted != 1e9+5 || m.Events[1].Valid != 1e9+100 || m.Header.Generators != 2 {
		t.Fatalf("merged %+v", m.Events)
	}
	b.Header.RunID = "other"
	if _, err := Merge([]*History{a, b}); err == nil || !strings.Contains(err.Error(), "different runs") {
		t.Fatalf("histories of two runs merged: %v", err)
	}
	b.Header.RunID, b.Header.Generator = "r", 0
	if _, err := Merge([]*History{a, b}); err == nil || !strings.Contains(err.Error(), "two histories of generator 0") {
		t.Fatalf("one generator merged twice: %v", err)
	}
}

// FuzzRead: any bytes, plain or gzip'd, give a history or an error, never a panic.
func FuzzRead(f *testing.F) {
	f.Add([]byte(`{"schema":"lockbench-history/v1","run_id":"r"}` + "\n" + `{"g":0,"w":1,"key":2,"op":"write","out":"stale_accepted","win":true,"call":1,"ret":2,"token":"t","seq":3}` + "\n" + `{"end":true,"events":1}`))
	f.Add([]byte(`{"schema":"lockbench-history/v1"}` + "\n" + `{"fault":"at=1s kill primary","start_ns":5}`))
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write([]byte(`{"schema":"lockbench-history/v1"}`))
	_ = zw.Close()
	f.Add(gz.Bytes())
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := Read(bytes.NewReader(b))
		if err == nil && h.Header.Schema != Schema {
			t.Fatalf("accepted a history of schema %q", h.Header.Schema)
		}
	})
}

// TestBufferSizes holds the writer's bounds: small buffers, about 64k
// events in flight whatever the workers, and room beyond the workers' own.
func TestBufferSizes(t *testing.T) {
	for _, tc := range []struct{ workers, per, most int }{
		{1, 64, 1024},
		{16, 64, 1024},
		{256, 64, 1024},
		{1000, 32, 2048},
		{10000, 32, 10008},
	} {
		per, most := bufferSizes(tc.workers)
		if per != tc.per || most != tc.most {
			t.Errorf("bufferSizes(%d) = %d, %d; want %d, %d", tc.workers, per, most, tc.per, tc.most)
		}
	}
}

// TestFreeBuffers: buffers are made on demand up to the bound, the one
// freed last is reused first, and a worker that finds none waits for one
// and has the wait counted. It runs in a synctest bubble, so the taker is
// known to be waiting before the buffer is given, and the wait lasts
// exactly the bubble's millisecond.
func TestFreeBuffers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, err := Create(filepath.Join(t.TempDir(), "h.jsonl.gz"), Header{Origin: time.Now()}, 1)
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := w.Close(nil, Trailer{}); err != nil {
				t.Error(err)
			}
		}()
		a, b := w.take(), w.take()
		if w.made != 3 {
			t.Fatalf("made %d buffers, want 3 (the worker's and two taken)", w.made)
		}
		w.give(a)
		w.give(b)
		if got := w.take(); cap(got) == 0 || &got[:1][0] != &b[:1][0] {
			t.Errorf("take after give(a), give(b) did not return b")
		}
		if w.stalledNS.Load() != 0 {
			t.Fatalf("stalled %dns with buffers free", w.stalledNS.Load())
		}
		w.mu.Lock()
		w.made, w.free = w.most, nil
		w.mu.Unlock()
		got := make(chan []Event)
		go func() { got <- w.take() }()
		synctest.Wait() // the taker waits for a buffer
		time.Sleep(time.Millisecond)
		w.give(a)
		if evs := <-got; &evs[:1][0] != &a[:1][0] {
			t.Errorf("waiting take did not get the buffer given")
		}
		if w.made != w.most {
			t.Errorf("made %d buffers past the bound %d", w.made, w.most)
		}
		if got := time.Duration(w.stalledNS.Load()); got != time.Millisecond {
			t.Errorf("stalled %v, want the 1ms the taker waited", got)
		}
	})
}
