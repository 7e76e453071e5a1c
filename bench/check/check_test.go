package check

import (
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/lockbench/lockbench/bench/history"
	"github.com/lockbench/lockbench/results"
)

const ms = int64(time.Millisecond)

// sec builds the resource events of one critical section on key 1: enter
// granted at g with validity to v, a write at w (0: none), exit at x.
type sec struct {
	worker        int
	g, v, w, x    int64
	fence         int64
	outsideWindow bool
}

// build lays sections' events out in time order with sequence numbers, as
// the resource would have stamped them.
// timed is a resource event at the time the resource stamped it.
type timed struct {
	at int64
	e  history.Event
}

// byTime sorts events by their times (insertion sort: few events).
func byTime(evs []timed) {
	for i := 1; i < len(evs); i++ {
		for j := i; j > 0 && evs[j].at < evs[j-1].at; j-- {
			evs[j], evs[j-1] = evs[j-1], evs[j]
		}
	}
}

func build(secs []sec, renewals map[int]int64) *history.History {
	type ev = timed
	var evs []ev
	for _, s := range secs {
		tok := "tok" + string(rune('a'+s.worker))
		base := history.Event{Key: 1, Worker: s.worker, Token: tok, Fence: s.fence, Window: !s.outsideWindow, Valid: s.v, Out: history.OutOK}
		enter := base
		enter.Op, enter.Granted, enter.Call, enter.Return = history.OpEnter, s.g, s.g+1, s.g+1
		evs = append(evs, ev{s.g + 1, enter})
		if r, ok := renewals[s.worker]; ok {
			rn := base
			rn.Op, rn.Valid, rn.Call, rn.Return = history.OpRenewed, r, s.g+2, s.g+2
			evs = append(evs, ev{s.g + 2, rn})
		}
		if s.w > 0 {
			wr := base
			wr.Op, wr.Call, wr.Return = history.OpWrite, s.w, s.w
			evs = append(evs, ev{s.w, wr})
		}
		ex := base
		ex.Op, ex.Call, ex.Return = history.OpExit, s.x, s.x
		evs = append(evs, ev{s.x, ex})
	}
	byTime(evs)
	h := &history.History{Header: history.Header{Schema: history.Schema, RunID: "t", Resource: "in-process", DriftNS: 3 * ms, TTLNS: 100 * ms},
		Trailer: &history.Trailer{}}
	// The resource records a write whose fence is below one written as
	// rejected, as it would have.
	var highest int64
	for i, e := range evs {
		if e.e.Op == history.OpWrite && e.e.Fence > 0 {
			if e.e.Fence < highest {
				e.e.Out = history.OutFencingRejected
			}
			highest = max(highest, e.e.Fence)
		}
		e.e.Seq = uint64(i + 1)
		h.Events = append(h.Events, e.e)
	}
	return h
}

func TestCheckCountsEachCause(t *testing.T) {
	for _, tc := range []struct {
		name     string
		secs     []sec
		renewals map[int]int64
		drift    time.Duration
		want     Counts
	}{
		{"one holder after another", []sec{{0, 0, 100 * ms, 50 * ms, 60 * ms, 0, false}, {1, 70 * ms, 170 * ms, 80 * ms, 90 * ms, 0, false}}, nil, -1, Counts{}},
		{"granted while the first lease was valid", []sec{{0, 0, 100 * ms, 0, 60 * ms, 0, false}, {1, 50 * ms, 150 * ms, 0, 90 * ms, 0, false}}, nil, -1,
			Counts{DoubleGrants: 1}},
		{"granted after the first lease ended, first still inside", []sec{{0, 0, 100 * ms, 0, 160 * ms, 0, false}, {1, 120 * ms, 220 * ms, 0, 190 * ms, 0, false}}, nil, -1,
			Counts{Overruns: 1}},
		{"granted within the drift allowance", []sec{{0, 0, 100 * ms, 0, 160 * ms, 0, false}, {1, 98 * ms, 198 * ms, 0, 190 * ms, 0, false}}, nil, -1,
			Counts{Overruns: 1}},
		{"no drift allowance given: a double grant", []sec{{0, 0, 100 * ms, 0, 160 * ms, 0, false}, {1, 98 * ms, 198 * ms, 0, 190 * ms, 0, false}}, nil, 0,
			Counts{DoubleGrants: 1}},
		{"renewal moves the lease's end", []sec{{0, 0, 100 * ms, 0, 160 * ms, 0, false}, {1, 120 * ms, 220 * ms, 0, 190 * ms, 0, false}}, map[int]int64{0: 300 * ms}, -1,
			Counts{DoubleGrants: 1}},
		{"stale write accepted", []sec{{0, 0, 100 * ms, 170 * ms, 180 * ms, 0, false}, {1, 120 * ms, 220 * ms, 130 * ms, 140 * ms, 0, false}}, nil, -1,
			Counts{Overruns: 1, StaleAccepted: 1, LateWrites: 1}},
		{"fenced stale write rejected", []sec{{0, 0, 100 * ms, 170 * ms, 180 * ms, 1, false}, {1, 120 * ms, 220 * ms, 130 * ms, 140 * ms, 2, false}}, nil, -1,
			Counts{Overruns: 1, FencingRejected: 1, LateWrites: 1}},
		{"outside the window: not counted", []sec{{0, 0, 100 * ms, 0, 60 * ms, 0, true}, {1, 50 * ms, 150 * ms, 0, 90 * ms, 0, true}}, nil, -1, Counts{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := build(tc.secs, tc.renewals)
			opts := Options{}
			if tc.drift >= 0 {
				opts.Drift, opts.DriftSet = tc.drift, true
			}
			rep, err := Check(h, opts)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Counts != tc.want {
				t.Fatalf("counts %+v, want %+v", rep.Counts, tc.want)
			}
			violated := len(rep.Keys) > 0
			if violated != (rep.Porcupine == porcupine.Illegal) {
				t.Fatalf("Porcupine says %s, the replay found %d failing keys", rep.Porcupine, len(rep.Keys))
			}
			if tc.want.Unsafe(false) != rep.Unsafe() {
				t.Fatalf("unsafe %v, want %v", rep.Unsafe(), tc.want.Unsafe(false))
			}
			h.Header.Fencing = true
			if rep, _ := Check(h, opts); rep.Unsafe() != (tc.want.DoubleGrants+tc.want.StaleAccepted > 0) {
				t.Fatalf("with fencing: unsafe %v; an overrun alone is not", rep.Unsafe())
			}
		})
	}
}

func TestAgreeNamesTheDisagreeingEvent(t *testing.T) {
	h := build([]sec{{0, 0, 100 * ms, 0, 60 * ms, 0, false}, {1, 50 * ms, 150 * ms, 0, 90 * ms, 0, false}}, nil)
	enter := func() *history.Event {
		for i := range h.Events {
			if h.Events[i].Op == history.OpEnter && h.Events[i].Worker == 1 {
				return &h.Events[i]
			}
		}
		t.Fatal("no second entry")
		return nil
	}
	enter().Out = history.OutDoubleGrant
	rep, err := Check(h, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.Agree(results.Incidents{Overlaps: 1, DoubleGrants: 1}); err != nil {
		t.Fatalf("agreeing counts refused: %v", err)
	}
	// The run recorded the entry as fine: check must say which event differs.
	enter().Out = history.OutOK
	rep, _ = Check(h, Options{})
	err = rep.Agree(results.Incidents{})
	if err == nil || !strings.Contains(err.Error(), "key 1") || !strings.Contains(err.Error(), "g0/w1 enter") {
		t.Fatalf("disagreement not named by key and event: %v", err)
	}
}

// TestLongKeyIsCheckedInSegments: a hot key's events are cut into
// segments that resume from the state before them, so a violation deep in
// the key is found, and Porcupine's verdict matches the replay.
func TestLongKeyIsCheckedInSegments(t *testing.T) {
	var secs []sec
	for i := range int64(2000) {
		at := i * 10 * ms
		secs = append(secs, sec{int(i % 4), at, at + 100*ms, at + 2*ms, at + 3*ms, 0, false})
	}
	// The last section enters while the one before is inside and valid.
	last := &secs[len(secs)-1]
	last.g = secs[len(secs)-2].g + ms
	h := build(secs, nil)
	rep, err := Check(h, Options{Visualize: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Counts.DoubleGrants != 1 || rep.Porcupine != porcupine.Illegal || rep.Illegal() != 1 {
		t.Fatalf("double grants %d, Porcupine %s, illegal segments %d; want 1, Illegal, 1", rep.Counts.DoubleGrants, rep.Porcupine, rep.Illegal())
	}
	var sb strings.Builder
	if err := rep.Visualize(&sb); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sb.String(), "granted 19.981000s") {
		t.Fatal("the visualization does not show the violating entry")
	}
}
