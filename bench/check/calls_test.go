package check

import (
	"fmt"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/bench/history"
)

// held is one holder's whole stay as a run records it: the acquire's call
// and return and validity, the resource's enter (at the return), a write,
// the exit, and the release's call and return.
type held struct {
	worker                int
	call, ret, valid      int64
	write, exit, released int64
	fence                 int64
	writeOut              history.Outcome
	// ended, when set, is the end the lock reported for the lease (its
	// session ended), heard at heard; writeValid, when set, is the
	// validity the write recorded (else valid).
	ended, heard, writeValid int64
}

// withCalls lays out the sections' lock calls and resource events, the
// resource's in the order of their times, as a run would have written them.
func withCalls(hs []held) *history.History {
	h := &history.History{Header: history.Header{Schema: history.Schema, RunID: "t", Resource: "in-process", DriftNS: 3 * ms, TTLNS: 100 * ms},
		Trailer: &history.Trailer{}}
	var res []timed
	for _, s := range hs {
		tok := "tok" + string(rune('a'+s.worker))
		base := history.Event{Key: 1, Worker: s.worker, Token: tok, Fence: s.fence, Window: true, Out: history.OutOK}
		acq := base
		acq.Op, acq.Call, acq.Return, acq.Valid = history.OpAcquire, s.call, s.ret, s.valid
		rel := base
		rel.Op, rel.Call, rel.Return = history.OpRelease, s.released, s.released+ms
		h.Events = append(h.Events, acq, rel)
		if s.ended > 0 {
			lost := base
			lost.Op, lost.Out, lost.Call, lost.Return, lost.Valid = history.OpLost, history.OutLost, s.ended, s.heard, s.ended
			h.Events = append(h.Events, lost)
		}
		enter := base
		enter.Op, enter.Call, enter.Return, enter.Granted, enter.Valid = history.OpEnter, s.ret+1, s.ret+1, s.ret, s.valid
		res = append(res, timed{s.ret + 1, enter})
		if s.write > 0 {
			wr := base
			wr.Op, wr.Call, wr.Return, wr.Valid = history.OpWrite, s.write, s.write, s.valid
			if s.writeValid != 0 {
				wr.Valid = s.writeValid
			}
			if s.writeOut != 0 {
				wr.Out = s.writeOut
			}
			res = append(res, timed{s.write, wr})
		}
		ex := base
		ex.Op, ex.Call, ex.Return = history.OpExit, s.exit, s.exit
		res = append(res, timed{s.exit, ex})
	}
	byTime(res)
	for i, e := range res {
		e.e.Seq = uint64(i + 1)
		h.Events = append(h.Events, e.e)
	}
	return h
}

// rendered checks h and returns the report and its text.
func rendered(t *testing.T, h *history.History) (*Report, string) {
	t.Helper()
	rep, err := Check(h, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	rep.Render(&b)
	return rep, b.String()
}

// TestCheckReadsTheLocksCalls: the edited histories of issue 33, each
// caught as unsafe with the event named. Worker 0 holds the key 0–100 ms
// (valid to 100 ms); worker 1 is granted at 50 ms by a service that lost
// worker 0's lease.
func TestCheckReadsTheLocksCalls(t *testing.T) {
	t.Run("an acquire inside another's lease, the resource never seeing both", func(t *testing.T) {
		// Worker 0 leaves at 40 ms without releasing yet (release at 90 ms);
		// worker 1's acquire returns at 50 ms, inside worker 0's lease.
		h := withCalls([]held{
			{worker: 0, call: 0, ret: 1 * ms, valid: 100 * ms, exit: 40 * ms, released: 90 * ms},
			{worker: 1, call: 45 * ms, ret: 50 * ms, valid: 150 * ms, exit: 120 * ms, released: 130 * ms},
		})
		rep, out := rendered(t, h)
		if rep.Counts.DoubleGrants != 1 || !rep.Unsafe() {
			t.Fatalf("counts %+v:\n%s", rep.Counts, out)
		}
		for _, w := range []string{"double grant (by the lock's calls): g0/w1 enter", "g0/w1 acquire → ok", "g0/w0 acquire → ok"} {
			if !strings.Contains(out, w) {
				t.Errorf("report lacks %q:\n%s", w, out)
			}
		}
	})
	t.Run("released before the grant: legal", func(t *testing.T) {
		h := withCalls([]held{
			{worker: 0, call: 0, ret: 1 * ms, valid: 100 * ms, exit: 40 * ms, released: 42 * ms},
			{worker: 1, call: 45 * ms, ret: 50 * ms, valid: 150 * ms, exit: 120 * ms, released: 130 * ms},
		})
		if rep, out := rendered(t, h); rep.Counts != (Counts{}) || rep.Unsafe() {
			t.Fatalf("counts %+v:\n%s", rep.Counts, out)
		}
	})
	t.Run("a release in flight at the grant: the hand-over, legal", func(t *testing.T) {
		// Worker 0's release is called at 44 ms and returns at 45 ms;
		// worker 1's acquire was called at 44.5 ms, before it returned.
		h := withCalls([]held{
			{worker: 0, call: 0, ret: 1 * ms, valid: 100 * ms, exit: 40 * ms, released: 44 * ms},
			{worker: 1, call: 44*ms + ms/2, ret: 50 * ms, valid: 150 * ms, exit: 120 * ms, released: 130 * ms},
		})
		if rep, out := rendered(t, h); rep.Counts != (Counts{}) || rep.Unsafe() {
			t.Fatalf("counts %+v:\n%s", rep.Counts, out)
		}
	})
	t.Run("two acquires in flight together, both held after the later return: certain, unsafe", func(t *testing.T) {
		// Worker 1's acquire was called at 0.5 ms, before worker 0's returned
		// at 1 ms: which the service granted first cannot be told, but at
		// 50 ms both had returned ok and neither lease had ended or been
		// released: from then on both held the key at once.
		h := withCalls([]held{
			{worker: 0, call: 0, ret: 1 * ms, valid: 100 * ms, exit: 40 * ms, released: 90 * ms},
			{worker: 1, call: ms / 2, ret: 50 * ms, valid: 150 * ms, exit: 120 * ms, released: 130 * ms},
		})
		rep, out := rendered(t, h)
		if rep.Counts != (Counts{DoubleGrants: 1}) || !rep.Unsafe() {
			t.Fatalf("counts %+v:\n%s", rep.Counts, out)
		}
	})
	t.Run("two acquires in flight together, the first's lease ending meanwhile: possible, not counted", func(t *testing.T) {
		// Worker 0's lease (valid to 20 ms) ended while worker 1's acquire,
		// called at 0.5 ms, was in flight: had worker 1 been granted first,
		// worker 0 was granted inside its lease; had worker 0, worker 1 came
		// after its lease ended. The order decides.
		h := withCalls([]held{
			{worker: 0, call: 0, ret: 1 * ms, valid: 20 * ms, exit: 15 * ms, released: 60 * ms},
			{worker: 1, call: ms / 2, ret: 50 * ms, valid: 150 * ms, exit: 120 * ms, released: 130 * ms},
		})
		rep, out := rendered(t, h)
		if rep.Counts != (Counts{Possible: 1}) || rep.Unsafe() {
			t.Fatalf("counts %+v:\n%s", rep.Counts, out)
		}
		if !strings.Contains(out, "possible double grant (by the lock's calls)") {
			t.Errorf("report lacks the possible pair:\n%s", out)
		}
	})
	t.Run("a lease cut short on the enter event", func(t *testing.T) {
		// Both inside at once; worker 0's enter claims validity to 1 ms + 1 µs,
		// which would make worker 1's grant an overrun.
		h := withCalls([]held{
			{worker: 0, call: 0, ret: 1 * ms, valid: 100 * ms, exit: 80 * ms, released: 90 * ms},
			{worker: 1, call: 45 * ms, ret: 50 * ms, valid: 150 * ms, exit: 120 * ms, released: 130 * ms},
		})
		for i := range h.Events {
			if e := &h.Events[i]; e.Op == history.OpEnter && e.Worker == 0 {
				e.Valid = e.Granted + 1000
			}
		}
		rep, out := rendered(t, h)
		if rep.Counts.DoubleGrants != 1 || rep.Counts.Overruns != 0 || !rep.Unsafe() {
			t.Fatalf("counts %+v:\n%s", rep.Counts, out)
		}
		if !strings.Contains(out, "DISAGREEMENT: recorded valid to 0.001001s, the holder's own calls say 0.100000s: g0/w0 enter") {
			t.Errorf("report does not name the edited enter:\n%s", out)
		}
	})
	t.Run("a lower fence accepted", func(t *testing.T) {
		// Worker 1 (fence 2) writes at 60 ms; worker 0 (fence 1), past its
		// lease, writes at 110 ms and the resource records it accepted.
		h := withCalls([]held{
			{worker: 0, call: 0, ret: 1 * ms, valid: 100 * ms, write: 110 * ms, exit: 115 * ms, released: 116 * ms, fence: 1},
			{worker: 1, call: 101 * ms, ret: 102 * ms, valid: 200 * ms, write: 105 * ms, exit: 108 * ms, released: 109 * ms, fence: 2},
		})
		h.Header.Fencing = true
		rep, out := rendered(t, h)
		if rep.Counts.StaleAccepted != 1 || !rep.Unsafe() {
			t.Fatalf("counts %+v:\n%s", rep.Counts, out)
		}
		if !strings.Contains(out, "stale write accepted: g0/w0 write → ok") || !strings.Contains(out, "UNSAFE") {
			t.Errorf("report does not name the accepted write:\n%s", out)
		}
	})
}

// TestCallLedger holds the lock's-calls rule to its cases, as the run feeds it.
func TestCallLedger(t *testing.T) {
	l := history.NewCallLedger(3 * ms)
	if v := l.Acquired("a", 0, 1*ms, 100*ms); v.Certain || v.Possible {
		t.Fatalf("first grant: %+v", v)
	}
	if v := l.Acquired("b", 10*ms, 20*ms, 120*ms); !v.Certain || v.Against != "a" {
		t.Fatalf("inside a's lease: %+v", v)
	}
	l.Renewed("a", 30*ms, 200*ms)
	l.Releasing("b", 40*ms)
	l.Released("b", 41*ms)
	if v := l.Acquired("c", 150*ms, 160*ms, 260*ms); !v.Certain || v.Against != "a" {
		t.Fatalf("inside a's renewed lease: %+v", v)
	}
	l.Releasing("a", 170*ms)
	l.Releasing("c", 175*ms)
	l.Released("c", 176*ms)
	// a's release is still in flight when d is called: the hand-over.
	if v := l.Acquired("d", 171*ms, 180*ms, 280*ms); v.Certain || v.Possible {
		t.Fatalf("release in flight: %+v", v)
	}
	// f was called at 178 ms, before d returned: the order is unknown, but
	// both were valid and unreleased once f returned: certain.
	if v := l.Acquired("f", 178*ms, 182*ms, 282*ms); !v.Certain || v.Against != "d" {
		t.Fatalf("acquires in flight together: %+v", v)
	}
	l.Released("a", 185*ms)
	l.Prune(180 * ms)
	if l.Len() != 3 {
		t.Fatalf("pruning kept %d leases, want a (released at 185 ms), d and f", l.Len())
	}
	// Within the drift allowance of d's end: legal.
	if v := l.Acquired("e", 278*ms, 279*ms, 380*ms); v.Certain || v.Possible {
		t.Fatalf("within the drift: %+v", v)
	}
	for _, tok := range []string{"d", "f", "e"} {
		l.Releasing(tok, 390*ms)
		l.Released(tok, 391*ms)
	}
	// h is in flight when g is called, and h's validity ends while g is in
	// flight: had g been granted first, h came inside g's lease; had h, g
	// came after h's lease: the order decides, a possible double grant.
	l.Acquired("h", 400*ms, 401*ms, 450*ms)
	if v := l.Acquired("g", 400*ms+ms/2, 500*ms, 600*ms); v.Certain || !v.Possible || v.Against != "h" {
		t.Fatalf("the first's lease ending in flight: %+v", v)
	}
}

// TestCheckReadsALeaseEndTheLockReported plants a lock's report that a
// lease ended unasked (OpLost: its session ended at 40 ms, heard at 42
// ms) in a lease valid to 1 s, and a second worker acquiring at 50 ms
// while the first is unreleased (release called at 90 ms). A write after
// the end is a write after the lease, as an expired lease's is; one
// before it is not; a write before the report was heard is late too (the
// run counts it once the lock reports); a write the run judged by the
// uncut validity after the report came is a disagreement; and the second grant is no double grant once the report
// came, though without the report it is one.
func TestCheckReadsALeaseEndTheLockReported(t *testing.T) {
	second := held{worker: 1, call: 47 * ms, ret: 50 * ms, valid: 1050 * ms, write: 60 * ms, exit: 70 * ms, released: 80 * ms, fence: 2}
	for _, tc := range []struct {
		name         string
		first        held
		late         int64
		doubleGrants int64
		disagree     bool
	}{
		{"a write after the reported end", held{call: 0, ret: 1 * ms, valid: 1000 * ms, write: 44 * ms, exit: 45 * ms, released: 90 * ms,
			fence: 1, ended: 40 * ms, heard: 42 * ms, writeValid: 40 * ms}, 1, 0, false},
		{"a write after the end, reported only after it", held{call: 0, ret: 1 * ms, valid: 1000 * ms, write: 41 * ms, exit: 45 * ms,
			released: 90 * ms, fence: 1, ended: 40 * ms, heard: 42 * ms}, 1, 0, false},
		{"a write before the end", held{call: 0, ret: 1 * ms, valid: 1000 * ms, write: 30 * ms, exit: 45 * ms, released: 90 * ms,
			fence: 1, ended: 40 * ms, heard: 42 * ms}, 0, 0, false},
		{"a write the run judged by the uncut validity", held{call: 0, ret: 1 * ms, valid: 1000 * ms, write: 44 * ms, exit: 45 * ms,
			released: 90 * ms, fence: 1, ended: 40 * ms, heard: 42 * ms}, 1, 0, true},
		{"no report: the second grant is a double grant", held{call: 0, ret: 1 * ms, valid: 1000 * ms, write: 44 * ms, exit: 45 * ms,
			released: 90 * ms, fence: 1}, 0, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, text := rendered(t, withCalls([]held{tc.first, second}))
			if rep.Counts.LateWrites != tc.late || rep.Counts.DoubleGrants != tc.doubleGrants || rep.Counts.Overruns != 0 {
				t.Fatalf("counts %+v, want %d write(s) after the lease, %d double grant(s), no overrun\n%s", rep.Counts, tc.late, tc.doubleGrants, text)
			}
			disagreed := len(rep.Keys) > 0 && len(rep.Keys[0].Disagreements) > 0
			if disagreed != tc.disagree {
				t.Fatalf("disagreement %v, want %v\n%s", disagreed, tc.disagree, text)
			}
			if !strings.Contains(text, fmt.Sprintf("%-24s %8d", "writes after the lease", tc.late)) {
				t.Fatalf("the report does not show %d write(s) after the lease:\n%s", tc.late, text)
			}
		})
	}
}
