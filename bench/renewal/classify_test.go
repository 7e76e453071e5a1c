package renewal

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/bench/history"
	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/lockimpl"
)

const milli = int64(time.Millisecond)

// ev is a history event in milliseconds, on key 0.
func ev(token string, op history.Op, out history.Outcome, call, ret, valid int64) history.Event {
	return history.Event{Token: token, Op: op, Out: out, Call: call * milli, Return: ret * milli, Valid: valid * milli, Window: true}
}

// acquired is a lease of token granted at t with a 300 ms validity.
func acquired(token string, t int64) history.Event {
	return ev(token, history.OpAcquire, history.OutOK, t, t, t+300)
}

func hist(faults []history.Fault, events ...history.Event) *history.History {
	return &history.History{Header: history.Header{TTLNS: int64(300 * time.Millisecond), DriftNS: 5 * milli}, Events: events, Faults: faults}
}

// at is one fault firing from start to end, in milliseconds.
func at(start, end int64) []history.Fault {
	return []history.Fault{{Spec: "fault", StartNS: start * milli, EndNS: end * milli}}
}

func caseNamed(t *testing.T, name string) Case {
	t.Helper()
	i := slices.IndexFunc(All(), func(c Case) bool { return c.Name == name })
	if i < 0 {
		t.Fatalf("no case %s", name)
	}
	return All()[i]
}

// TestClassify plants each outcome in a history whose answer follows from
// the definitions: a write after the lease's validity overran (fenced if the
// resource rejected it), a holder that left after a lost or failed renewal
// past its validity was caught, a renewal that succeeded though called
// after the lease expired resurrected it, and a fault that hit no held
// lease is inconclusive. On zk (lock set), renewal-failing's session ended
// at the fault, or where the lock reported its end (history.OpLost), at
// that: a holder inside then that writes after it overran.
func TestClassify(t *testing.T) {
	const A, B = "aaaa", "bbbb"
	for _, tc := range []struct {
		name    string
		kase    string
		lock    string
		h       *history.History
		want    []Outcome
		exposed int
		delayMS []int64
	}{
		{"renewals fail, holder leaves without writing: caught at the next renewal", "renewal-failing", "", hist(at(50, 650),
			acquired(A, 0), ev(A, history.OpEnter, history.OutOK, 0, 0, 300),
			ev(A, history.OpRenew, history.OutFailed, 100, 101, 300), ev(A, history.OpRenew, history.OutFailed, 200, 201, 300),
			ev(A, history.OpRenew, history.OutFailed, 320, 330, 300), ev(A, history.OpExit, history.OutOK, 331, 331, 0)),
			[]Outcome{Caught}, 1, []int64{30}},
		{"renewals fail, holder writes after its validity: overran", "renewal-failing", "", hist(at(50, 650),
			acquired(A, 0), ev(A, history.OpRenew, history.OutFailed, 100, 101, 300),
			ev(A, history.OpWrite, history.OutOK, 310, 310, 300), ev(A, history.OpExit, history.OutOK, 311, 311, 0)),
			[]Outcome{Overran}, 1, nil},
		{"the late write rejected by the fence: fenced", "renewal-failing", "", hist(at(50, 650),
			acquired(A, 0), ev(A, history.OpWrite, history.OutFencingRejected, 310, 310, 300), ev(A, history.OpExit, history.OutOK, 311, 311, 0)),
			[]Outcome{Fenced}, 1, nil},
		{"work done within the validity: no exposure", "renewal-failing", "", hist(at(50, 650),
			acquired(A, 0), ev(A, history.OpWrite, history.OutOK, 200, 200, 300), ev(A, history.OpExit, history.OutOK, 201, 201, 0)),
			[]Outcome{Inconclusive}, 0, nil},
		{"nobody holds when the fault fires: inconclusive", "renewal-failing", "", hist(at(500, 900),
			acquired(A, 0), ev(A, history.OpWrite, history.OutOK, 100, 100, 300), ev(A, history.OpExit, history.OutOK, 101, 101, 0)),
			[]Outcome{Inconclusive}, 0, nil},
		{"extend called after expiry succeeds: resurrected, overran", "expired-extend", "", hist(at(50, 350),
			acquired(A, 0), ev(A, history.OpRenew, history.OutFailed, 100, 101, 300), ev(A, history.OpRenew, history.OutOK, 400, 401, 700)),
			[]Outcome{Overran}, 1, nil},
		{"extend answered after expiry says lost: caught", "expired-extend", "", hist(at(50, 350),
			acquired(A, 0), ev(A, history.OpRenew, history.OutLost, 100, 360, 300), ev(A, history.OpExit, history.OutOK, 361, 361, 0)),
			[]Outcome{Caught}, 1, []int64{60}},
		{"extend never answered after expiry: not asked, inconclusive", "expired-extend", "", hist(at(50, 350),
			acquired(A, 0), ev(A, history.OpRenew, history.OutFailed, 310, 311, 300), ev(A, history.OpExit, history.OutOK, 312, 312, 0)),
			[]Outcome{Inconclusive}, 0, nil},
		{"server restarted empty, next renewal lost: caught", "restart-empty", "", hist(at(100, 150),
			acquired(A, 0), ev(A, history.OpRenew, history.OutLost, 200, 201, 300), ev(A, history.OpExit, history.OutOK, 202, 202, 0)),
			[]Outcome{Caught}, 1, []int64{101}},
		{"server restarted, a renewal after it succeeds: kept", "restart-empty", "", hist(at(100, 150),
			acquired(A, 0), ev(A, history.OpRenew, history.OutOK, 200, 201, 500),
			ev(A, history.OpWrite, history.OutOK, 250, 250, 500), ev(A, history.OpExit, history.OutOK, 251, 251, 0)),
			[]Outcome{Kept}, 1, nil},
		{"server restarted, another holder enters, the first writes: overran", "restart-empty", "", hist(at(100, 150),
			acquired(A, 0), acquired(B, 160), ev(A, history.OpWrite, history.OutOK, 200, 200, 300), ev(A, history.OpExit, history.OutOK, 201, 201, 0),
			ev(A, history.OpRelease, history.OutLost, 202, 203, 0)),
			[]Outcome{Overran}, 1, nil},
		{"a paused holder writes past its validity: one trial, overran", "process-paused", "", hist(nil,
			acquired(A, 0), ev(A, history.OpRenew, history.OutOK, 100, 101, 400),
			ev(A, history.OpWrite, history.OutOK, 750, 750, 400), ev(A, history.OpExit, history.OutOK, 751, 751, 0),
			acquired(B, 0), ev(B, history.OpWrite, history.OutOK, 150, 150, 300), ev(B, history.OpExit, history.OutOK, 151, 151, 0)),
			[]Outcome{Overran}, 1, nil},
		{"zk: the session ended while inside, the holder writes within its recorded validity: overran", "renewal-failing", "zk",
			hist(at(100, 100), acquired(A, 0), ev(A, history.OpWrite, history.OutOK, 250, 250, 1000), ev(A, history.OpExit, history.OutOK, 251, 251, 0)),
			[]Outcome{Overran}, 1, nil},
		{"zk: the late write rejected by the node's czxid: fenced", "renewal-failing", "zk",
			hist(at(100, 100), acquired(A, 0), ev(A, history.OpWrite, history.OutFencingRejected, 250, 250, 1000), ev(A, history.OpExit, history.OutOK, 251, 251, 0)),
			[]Outcome{Fenced}, 1, nil},
		{"zk: the lock reports the session ended before the fault's stamp, the holder wrote between: overran", "renewal-failing", "zk",
			hist(at(100, 100), acquired(A, 0), ev(A, history.OpWrite, history.OutOK, 95, 95, 1000), ev(A, history.OpExit, history.OutOK, 96, 96, 0),
				ev(A, history.OpLost, history.OutLost, 90, 300, 90)),
			[]Outcome{Overran}, 1, nil},
		{"zk: the lock reports the session ended after the fault's stamp, the holder wrote and left between: no exposure", "renewal-failing", "zk",
			hist(at(100, 100), acquired(A, 0), ev(A, history.OpWrite, history.OutOK, 120, 120, 1000), ev(A, history.OpExit, history.OutOK, 121, 121, 0),
				ev(A, history.OpLost, history.OutLost, 150, 300, 150)),
			[]Outcome{Inconclusive}, 0, nil},
		{"zk: the lock reports the session ended after the fault's stamp, the holder wrote after the end: overran", "renewal-failing", "zk",
			hist(at(100, 100), acquired(A, 0), ev(A, history.OpWrite, history.OutOK, 200, 200, 1000), ev(A, history.OpExit, history.OutOK, 201, 201, 0),
				ev(A, history.OpLost, history.OutLost, 150, 300, 150)),
			[]Outcome{Overran}, 1, nil},
		{"zk: the holder wrote before the session ended: no exposure", "renewal-failing", "zk",
			hist(at(300, 300), acquired(A, 0), ev(A, history.OpWrite, history.OutOK, 250, 250, 1000), ev(A, history.OpExit, history.OutOK, 251, 251, 0)),
			[]Outcome{Inconclusive}, 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := caseNamed(t, tc.kase)
			if tc.lock != "" {
				c = c.on(lockNamed(t, tc.lock))
			}
			trials := Classify(c, "run", tc.h)
			var got []Outcome
			exposed := 0
			var delays []int64
			for _, tr := range trials {
				got = append(got, tr.Outcome)
				exposed += tr.Exposure
				for _, d := range tr.DelaysNS {
					delays = append(delays, d/milli)
				}
			}
			if !slices.Equal(got, tc.want) || exposed != tc.exposed || !slices.Equal(delays, tc.delayMS) {
				t.Errorf("outcomes %v, exposure %d, delays %v ms; want %v, %d, %v", got, exposed, delays, tc.want, tc.exposed, tc.delayMS)
			}
		})
	}
}

// TestJudge: a cell takes its worst conclusive trial's word when that is
// a harm (a holder wrote after losing its lease: overran or fenced), which
// one observed trial earns; a word of safety (caught, kept, a probe's
// correct word) needs 0 harmful trials of at least 29 (0.05^(1/29) < 0.9:
// the 95% upper bound within 10%), else the cell is undecided; trials
// without exposure do not count, and a cell of none is inconclusive with no
// bounds (not a pass).
func TestJudge(t *testing.T) {
	trials := func(n int, o Outcome) []Trial {
		ts := make([]Trial, n)
		for i := range ts {
			ts[i] = Trial{Exposure: 1, Outcome: o}
		}
		return ts
	}
	for _, tc := range []struct {
		name       string
		words      map[Outcome]string
		trials     []Trial
		verdict    string
		short      string
		conclusive int
		bounded    bool
	}{
		{"one overran among caught", nil, []Trial{{Exposure: 2, Outcome: Caught}, {Exposure: 1, Outcome: Overran}, {Exposure: 0}}, "overran", "overran 1/2", 2, true},
		{"caught and kept, too few", nil, []Trial{{Exposure: 2, Outcome: Caught}, {Exposure: 1, Outcome: Kept}}, "undecided", "undecided 0/2 (≤78%)", 2, true},
		{"caught in 29", nil, trials(29, Caught), "caught", "caught 29/29", 29, true},
		{"caught in 28", nil, trials(28, Caught), "undecided", "undecided 0/28 (≤11%)", 28, true},
		{"kept in 30", nil, trials(30, Kept), "kept", "kept 30/30", 30, true},
		{"fenced beats caught", nil, []Trial{{Exposure: 2, Outcome: Fenced}, {Exposure: 1, Outcome: Caught}}, "fenced", "fenced 1/2", 2, true},
		{"no exposure anywhere", nil, []Trial{{Exposure: 0}, {Exposure: 0}}, "inconclusive", "inconclusive", 0, false},
		{"a probe's words: one adds", map[Outcome]string{Caught: "resets", Overran: "adds"},
			[]Trial{{Exposure: 1, Outcome: Caught}, {Exposure: 1, Outcome: Overran}}, "adds", "adds 1/2", 2, true},
		{"a probe's words: all refused, too few", map[Outcome]string{Caught: "refused", Overran: "recreated"},
			trials(2, Caught), "undecided", "undecided 0/2 (≤78%)", 2, true},
		{"a probe's words: all refused", map[Outcome]string{Caught: "refused", Overran: "recreated"},
			trials(29, Caught), "refused", "refused 29/29", 29, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Cell{Trials: tc.trials, Outcomes: map[string]int{}}
			c.judge(Case{Words: tc.words}, 0.1)
			if c.Verdict != tc.verdict || c.Short() != tc.short || c.Conclusive != tc.conclusive || (c.OverranUpper != nil) != tc.bounded {
				t.Errorf("verdict %s (%s), %d conclusive, bounded %v; want %s (%s), %d, %v", c.Verdict, c.Short(), c.Conclusive,
					c.OverranUpper != nil, tc.verdict, tc.short, tc.conclusive, tc.bounded)
			}
			if c.OverranUpper != nil && (*c.OverranLower > *c.OverranUpper || *c.OverranUpper > 1 || *c.OverranLower < 0) {
				t.Errorf("bounds %v–%v out of order", *c.OverranLower, *c.OverranUpper)
			}
		})
	}
}

// FuzzSelect: any --cases/--locks value is either accepted, giving only
// known names, or refused with an input error; never a panic.
func FuzzSelect(f *testing.F) {
	for _, s := range []string{"", "all", "restart-empty", "single,etcd", " single , fenced ", "gc-pause", ",", "all,single"} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, cases, locks string) {
		cs, ls, err := Select(cases, locks, nil)
		if err != nil {
			return
		}
		if len(cs) == 0 || len(ls) == 0 {
			t.Fatalf("Select(%q, %q) accepted with nothing selected", cases, locks)
		}
	})
}

// TestFirings: faults a recipe scheduled at one instant (one per node) are
// one firing, even applied far apart on a loaded machine; others are not.
func TestFirings(t *testing.T) {
	h := hist([]history.Fault{
		{Spec: "at=300ms partition node=0 for=300ms", StartNS: 301 * milli, EndNS: 601 * milli},
		{Spec: "at=300ms partition node=1 for=300ms", StartNS: 390 * milli, EndNS: 690 * milli},
		{Spec: "at=1500ms partition node=0 for=300ms", StartNS: 1502 * milli, EndNS: 1802 * milli},
	})
	got := firings(h)
	mid := int64(690+(1502-690)/2) * milli
	want := []firing{{301 * milli, 690 * milli, math.MinInt64, mid}, {1502 * milli, 1802 * milli, mid, math.MaxInt64}}
	if !slices.Equal(got, want) {
		t.Errorf("firings %v; want %v", got, want)
	}
}

// TestSessionAnalogues: on zk, whose lease is a session, a case runs as
// its session analogue (renewal-failing: the session ended by the
// ensemble, no renewal flag), or is n/a with a reason of its own; on a
// lock that renews, every case is itself.
func TestSessionAnalogues(t *testing.T) {
	zk, single := lockNamed(t, lockimpl.LockZk), lockNamed(t, lockimpl.LockSingle)
	for _, c := range All() {
		ok, why := c.Applies(zk)
		switch {
		case c.Name == "renewal-failing":
			v := c.Flags(zk)
			if !ok || c.on(zk).Loss != LossSessionEnded || v.Has("renew-every") || !strings.Contains(v["fault"][0], "expire holder") {
				t.Errorf("renewal-failing on zk: applies %v (%s), flags %v; want the session ended by expire holder, no renewal", ok, why, v)
			}
		case ok || why == "":
			t.Errorf("%s on zk: applies %v, why %q; want n/a with a reason", c.Name, ok, why)
		}
		if on := c.on(single); on.NotApplicable != c.NotApplicable || on.Loss != c.Loss {
			t.Errorf("%s on single: changed by on()", c.Name)
		}
	}
}

// TestEveryLockCanBeCut holds cut's premise: every renewal-check lock's
// topology takes a partition locally, so renewal-failing and
// expired-extend cut every lock's path the same way.
func TestEveryLockCanBeCut(t *testing.T) {
	for _, l := range Locks() {
		spec, err := compose.ParseSpec(l.Topology)
		if err != nil {
			t.Fatalf("%s: topology %q: %v", l.Name, l.Topology, err)
		}
		if !slices.Contains(spec.Info().Faults[compose.ProviderLocal], compose.FaultKind(l.cut())) {
			t.Errorf("%s on %s: its local topology does not take %s; renewal-check cannot cut its path", l.Name, l.Topology, l.cut())
		}
	}
}
