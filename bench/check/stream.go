package check

import (
	"cmp"
	"errors"
	"math"
	"slices"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/lockbench/lockbench/bench/history"
)

// How the check streams. A history is read once, in the file's order,
// which is each worker's own (the writer keeps a worker's events in the
// order it added them, history.Event.Added) but not the run's: workers'
// buffers reach the file as they fill. Every worker has got at least as
// far as the watermark, the least of how far each has got; a key's lock
// calls and resource events before the watermark can no longer be joined
// by earlier ones, so they are stepped through the model then, in the
// order a reader of the whole history would have taken them, and what no
// later event can concern is let go: a lease once its release was called
// and its key's events up to then were stepped, a resource event once its
// segment went to Porcupine. What stays is per key: the leases not yet
// released and the events not yet under the watermark, so the memory is
// bounded by the keys and what is in flight, not by the history's length.
//
// A history whose events are not in each worker's order (merged by
// `results history merge`, or edited) is noticed as an event that comes
// after the watermark passed it; the check then reads the whole history
// into memory and checks it as Check does.

// errOutOfOrder is an event that came after the watermark passed it.
var errOutOfOrder = errors.New("history: an event after the watermark passed it")

// flushEvery is how many events are read between two watermark moves.
const flushEvery = 4096

// unheardAfter is how many events without a new worker make a reader of
// a file that does not say how many workers wrote it take every worker
// as heard from: the writer's buffers hold about 64k events in all.
const unheardAfter = 128 << 10

// CheckFiles checks the history files of one run (its generators' files
// are merged), streaming them.
func CheckFiles(paths []string, opts Options) (*Report, error) {
	s, err := history.OpenStream(paths)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	c := newChecker(s.Header(), opts)
	c.streams, c.workers = map[[2]int]*int64{}, s.Workers()
	var e history.Event
	for n := 1; ; n++ {
		ord, ok, err := s.Next(&e)
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		c.add(&e, ord)
		if c.outOfOrder {
			return reread(paths, opts)
		}
		if n%max(c.every, len(c.streams)) == 0 {
			c.advance(c.watermark())
		}
	}
	return c.finish(s.Faults(), s.Trailer()), nil
}

// reread checks a history whose events were not in each worker's order
// from memory.
func reread(paths []string, opts Options) (*Report, error) {
	h, err := history.ReadFiles(paths)
	if err != nil {
		return nil, err
	}
	r, err := Check(h, opts)
	if r != nil {
		r.reread = true
	}
	return r, err
}

// Check checks a history held in memory: its events are stepped in the
// order they were added (history.Event.Added), ties in the history's order.
func Check(h *history.History, opts Options) (*Report, error) {
	order := make([]int32, len(h.Events))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortStableFunc(order, func(a, b int32) int { return cmp.Compare(h.Events[a].Added(), h.Events[b].Added()) })
	c := newChecker(h.Header, opts)
	for n, i := range order {
		c.add(&h.Events[i], history.Ord{Pos: int64(i)})
		if (n+1)%c.every == 0 {
			c.advance(h.Events[i].Added())
		}
	}
	return c.finish(h.Faults, h.Trailer), nil
}

// checker is one check in progress.
type checker struct {
	opts   Options
	drift  int64
	shared bool
	r      *Report
	keys   map[Key]*keyState
	dirty  []*keyState
	// streams is how far each worker (generator, worker) has got, when
	// streaming files; workers is how many each generator has, nil when
	// the files do not say.
	streams map[[2]int]*int64
	// lastW and lastFront are the worker of the event read last and its
	// entry in streams: a worker's events reach the file a buffer at a
	// time, so most events are the same worker's as the one before.
	lastW     [2]int
	lastFront *int64
	// lastKey and lastKS are the key of the event read last and its state.
	lastKey Key
	lastKS  *keyState
	workers map[int]int
	// read counts the events read, and lastNew when a worker was first
	// heard from: for files that do not say how many workers wrote them.
	read, lastNew int
	// written is each worker's last lease whose window writes a session
	// end the lock reports later could still make late.
	written    map[[2]int]*leaseRec
	outOfOrder bool
	// every is how many events are read between two watermark moves.
	every int
	// slab is where the events kept are copied, a chunk at a time: one
	// allocation per slabSize events instead of one per event. A chunk is
	// let go once none of its events is referred to.
	slab []history.Event
	// ops says whether segments' operations are built (to draw them, or
	// to hold the replay to Porcupine's search); mismatch counts segments
	// whose replay verdict Porcupine's search contradicted (crossCheck).
	ops      bool
	mismatch int
}

// slabSize is how many kept events one allocation holds: a chunk pinned by
// one long-kept event (a lease in flight, a violation named) is ~14 KB.
const slabSize = 128

func newChecker(h history.Header, opts Options) *checker {
	drift := time.Duration(h.DriftNS)
	if opts.DriftSet {
		drift = opts.Drift
	}
	c := &checker{opts: opts, drift: int64(drift), shared: h.Resource != "" && h.Resource != "in-process", keys: map[Key]*keyState{},
		written: map[[2]int]*leaseRec{}, every: cmp.Or(opts.flushEvery, flushEvery), ops: opts.Visualize || opts.crossCheck}
	c.r = &Report{Header: h, Drift: drift, Timeout: opts.Timeout, Porcupine: porcupine.Ok, model: model(int64(drift))}
	return c
}

// keep copies e into the slab.
func (c *checker) keep(e *history.Event) *history.Event {
	if len(c.slab) == cap(c.slab) {
		c.slab = make([]history.Event, 0, slabSize)
	}
	c.slab = append(c.slab, *e)
	return &c.slab[len(c.slab)-1]
}

// watermark is how far every worker has got: none of them can add an
// event before it. Until each worker the files name was heard from, a
// worker not yet heard from may have added anything.
func (c *checker) watermark() int64 {
	if c.workers != nil {
		want := 0
		for _, n := range c.workers {
			want += n
		}
		if len(c.streams) < want {
			return math.MinInt64
		}
	} else if c.read-c.lastNew < unheardAfter {
		// A file that does not say how many workers wrote it (one written
		// before it did): a worker not heard from by now is taken to have
		// added nothing yet. Were that wrong, its first event comes after
		// the watermark passed it, and the whole history is reread.
		return math.MinInt64
	}
	w := int64(math.MaxInt64)
	for _, f := range c.streams {
		w = min(w, *f)
	}
	return w
}

// leaseRec is one lease of a key as the check needs it: its acquisition,
// the lock's verdict on it, its renewals and reported end, and whether
// its holder entered.
type leaseRec struct {
	key   *keyState
	token string
	// acq is the ok acquisition, acqOrd its place in the history's order.
	acq     *history.Event
	acqOrd  history.Ord
	verdict history.CallVerdict
	// against is the acquisition of the lease a double grant was inside.
	against  *history.Event
	judged   bool
	renewals []*history.Event
	// end is the lock's first report that the lease ended unasked.
	end     *history.Event
	entered bool
	// released says the release was called, at relCall, by worker by.
	released bool
	relCall  int64
	by       [2]int
	// candidates are the window writes made within the lease's validity,
	// which a session end the lock reports later makes late.
	candidates []int64
}

// pending is an event waiting for the watermark, with its place in the
// history's order.
type pending struct {
	e   *history.Event
	ord history.Ord
}

// callStep is one lock call as the lock's-calls ledger takes it.
type callStep struct {
	at   int64
	kind stepKind
	pending
}

type stepKind uint8

// The ledger's steps, in the order a call's own steps are taken.
const (
	stepAcquired stepKind = iota
	stepRenewed
	stepReleasing
	stepReleased
	stepEnded
)

// keyState is one key's check in progress.
type keyState struct {
	kr     *KeyReport
	ledger *history.CallLedger
	steps  minHeap[callStep]
	res    minHeap[pending]
	leases map[string]*leaseRec
	// released are the leases whose release was called, to let go.
	released []*leaseRec
	// done is the watermark the key was last stepped to; lastSeq the
	// resource's sequence number stepped last.
	done    int64
	lastSeq uint64
	dirty   bool
	// state is the model's state after the events stepped so far,
	// stepped in place (stepOn).
	state  *state
	events int
	// The segment being replayed (see segment): whether one is open, the
	// key's replay time when it opened and when its first illegal step was
	// found (-1: none), and when the key's events now being stepped began.
	open                bool
	segOpened, segIllAt time.Duration
	stepping            time.Time
	// The segment's operations, built only to draw (Options.Visualize) or
	// to hold the replay to Porcupine's search (Options.crossCheck).
	cur     []porcupine.Operation
	clients map[[2]int]int
	last    int64
	// Violations and disagreements, kept in the order a whole-history
	// check lists them: the resource's, then grants without an entry (in
	// the history's order); validity disagreements before the model's.
	resViolations, resByCalls []Violation
	noEntry, noEntryByCalls   []ordered
	validityDis, modelDis     []Disagreement
	// The key's verdict (its worst segment's) and the time its replay took.
	porc         porcupine.CheckResult
	spent        time.Duration
	illegal      [][]porcupine.Operation
	illegalFound int
}

// ordered is a violation with its place in the history's order.
type ordered struct {
	v   Violation
	ord history.Ord
}

func (c *checker) key(e *history.Event) *keyState {
	k := Key{Generator: e.Generator, Key: e.Key}
	if c.shared {
		k.Generator = -1
	}
	if c.lastKS != nil && k == c.lastKey {
		return c.lastKS
	}
	ks := c.keys[k]
	if ks == nil {
		ks = &keyState{kr: &KeyReport{Key: k, Porcupine: porcupine.Ok}, ledger: history.NewCallLedger(c.drift), leases: map[string]*leaseRec{},
			steps: minHeap[callStep]{less: stepBefore}, res: minHeap[pending]{less: seqBefore},
			done: math.MinInt64, state: &state{}, clients: map[[2]int]int{}, porc: porcupine.Ok}
		c.keys[k] = ks
	}
	c.lastKey, c.lastKS = k, ks
	return ks
}

// add takes one event, in the file's order.
func (c *checker) add(e *history.Event, ord history.Ord) {
	if c.streams != nil {
		c.read++
		w := [2]int{e.Generator, e.Worker}
		f := c.lastFront
		if f == nil || w != c.lastW {
			if f = c.streams[w]; f == nil {
				c.lastNew = c.read
				f = new(int64)
				*f = e.Added()
				c.streams[w] = f
			}
			c.lastW, c.lastFront = w, f
		}
		*f = max(*f, e.Added())
	}
	if e.Op.Resource() && e.Seq == 0 {
		return
	}
	ks := c.key(e)
	if c.streams != nil && (e.Added() < ks.done || (e.Op.Resource() && e.Seq < ks.lastSeq)) {
		// Streaming, it came too late: the history is reread whole. In
		// memory the events come in the order they were added, and one
		// the resource stamped out of its order is stepped as it comes.
		c.outOfOrder = true
		return
	}
	keep := func() pending {
		ev := c.keep(e)
		if !ks.dirty {
			ks.dirty = true
			c.dirty = append(c.dirty, ks)
		}
		return pending{ev, ord}
	}
	switch {
	case e.Op.Resource():
		ks.res.push(keep())
	case e.Op == history.OpAcquire && e.Out == history.OutOK:
		p := keep()
		ks.steps.push(callStep{e.Return, stepAcquired, p})
		if e.Token != "" {
			ks.leases[e.Token] = &leaseRec{key: ks, token: e.Token, acq: p.e, acqOrd: ord}
		}
	case e.Op == history.OpRenew && e.Out == history.OutOK:
		p := keep()
		ks.steps.push(callStep{e.Return, stepRenewed, p})
		rec := ks.leases[e.Token]
		if rec == nil {
			rec = &leaseRec{key: ks, token: e.Token}
			ks.leases[e.Token] = rec
		}
		rec.renewals = append(rec.renewals, p.e)
	case e.Op == history.OpRelease:
		p := keep()
		ks.steps.push(callStep{e.Call, stepReleasing, p})
		ks.steps.push(callStep{e.Return, stepReleased, p})
		if rec := ks.leases[e.Token]; rec != nil && !rec.released {
			rec.released, rec.relCall, rec.by = true, e.Call, [2]int{e.Generator, e.Worker}
			ks.released = append(ks.released, rec)
		}
	case e.Op == history.OpLost:
		p := keep()
		ks.steps.push(callStep{e.Return, stepEnded, p})
		c.ended(ks, p.e)
	}
}

// ended takes the lock's report that a lease ended unasked: the lease's
// writes are judged by it, those already stepped too.
func (c *checker) ended(ks *keyState, e *history.Event) {
	rec := ks.leases[e.Token]
	if w := c.written[[2]int{e.Generator, e.Worker}]; rec == nil && w != nil && w.key == ks && w.token == e.Token {
		rec = w
	}
	if rec == nil || rec.end != nil {
		return
	}
	rec.end = e
	for _, at := range rec.candidates {
		if at > e.Valid {
			ks.kr.Counts.LateWrites++
		}
	}
	rec.candidates = nil
}

// advance steps every key with events before the watermark w.
func (c *checker) advance(w int64) {
	keep := c.dirty[:0]
	for _, ks := range c.dirty {
		ks.flush(c, w)
		if len(ks.steps.items)+len(ks.res.items) > 0 {
			keep = append(keep, ks)
			continue
		}
		ks.dirty = false
	}
	clear(c.dirty[len(keep):])
	c.dirty = keep
}

// flush steps the key's calls and resource events before w, in the
// order a whole-history check takes them, then lets go of the leases no
// later event can concern.
func (ks *keyState) flush(c *checker, w int64) {
	for len(ks.steps.items) > 0 && ks.steps.items[0].at < w {
		ks.step(ks.steps.pop())
	}
	if len(ks.res.items) > 0 && ks.res.items[0].e.Added() < w {
		// The replay's time is the key's search time (see segment).
		ks.stepping = time.Now()
		for len(ks.res.items) > 0 && ks.res.items[0].e.Added() < w {
			if p := ks.res.items[0]; p.e.Seq > ks.lastSeq+1 && p.e.Added() >= w-int64(time.Second) && w != math.MaxInt64 {
				// A sequence number not yet seen: a shared resource's
				// stamps may be out of its order by a little; wait for it.
				break
			}
			ks.resource(c, ks.res.pop())
		}
		ks.spent += time.Since(ks.stepping)
		ks.stepping = time.Time{}
	}
	ks.done = max(ks.done, w)
	bound := w
	if len(ks.res.items) > 0 {
		bound = min(bound, ks.res.items[0].e.Added())
	}
	if w == math.MaxInt64 {
		return
	}
	keep := ks.released[:0]
	for _, rec := range ks.released {
		if rec.relCall >= bound {
			keep = append(keep, rec)
			continue
		}
		c.letGo(ks, rec)
		if ks.leases[rec.token] == rec {
			delete(ks.leases, rec.token)
		}
	}
	clear(ks.released[len(keep):])
	ks.released = keep
	ks.ledger.Prune(w)
}

// stepBefore orders lock calls as a whole-history check takes them: by
// time, then the history's order, then a release's call before its return.
// (Written out: cmp.Or would compare every field of every pair.)
func stepBefore(a, b callStep) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	if c := a.ord.Compare(b.ord); c != 0 {
		return c < 0
	}
	return a.kind < b.kind
}

// seqBefore orders resource events by the resource's sequence number.
func seqBefore(a, b pending) bool {
	if a.e.Seq != b.e.Seq {
		return a.e.Seq < b.e.Seq
	}
	return a.ord.Compare(b.ord) < 0
}

// minHeap is a binary heap: a key's waiting events, least first.
type minHeap[T any] struct {
	items []T
	less  func(a, b T) bool
}

func (h *minHeap[T]) push(x T) {
	h.items = append(h.items, x)
	for i := len(h.items) - 1; i > 0; {
		p := (i - 1) / 2
		if !h.less(h.items[i], h.items[p]) {
			break
		}
		h.items[i], h.items[p] = h.items[p], h.items[i]
		i = p
	}
}

func (h *minHeap[T]) pop() T {
	top := h.items[0]
	n := len(h.items) - 1
	h.items[0] = h.items[n]
	var zero T
	h.items[n] = zero
	h.items = h.items[:n]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < n && h.less(h.items[l], h.items[m]) {
			m = l
		}
		if r := l + 1; r < n && h.less(h.items[r], h.items[m]) {
			m = r
		}
		if m == i {
			break
		}
		h.items[i], h.items[m] = h.items[m], h.items[i]
		i = m
	}
	return top
}

// step feeds one lock call to the ledger.
func (ks *keyState) step(s callStep) {
	e := s.e
	switch s.kind {
	case stepAcquired:
		v := ks.ledger.Acquired(e.Token, e.Call, e.Return, e.Valid)
		if rec := ks.leases[e.Token]; rec != nil && rec.acq == e {
			rec.verdict, rec.judged = v, true
			// The classification of a grant by the lock's calls is the
			// ledger's (history.CallLedger); its lease is named here while
			// it is still held.
			if v.Certain || v.Possible {
				if a := ks.leases[v.Against]; a != nil {
					rec.against = a.acq
				}
			}
		}
	case stepRenewed:
		ks.ledger.Renewed(e.Token, e.Return, e.Valid)
	case stepReleasing:
		ks.ledger.Releasing(e.Token, e.Call)
	case stepReleased:
		ks.ledger.Released(e.Token, e.Return)
	case stepEnded:
		ks.ledger.Ended(e.Token, e.Return, e.Valid)
	}
}

// letGo forgets a lease: an acquisition the lock's calls judged a double
// grant (or a possible one) whose holder never entered is counted now.
func (c *checker) letGo(ks *keyState, rec *leaseRec) {
	if rec.judged && !rec.entered && (rec.verdict.Certain || rec.verdict.Possible) {
		cause := CauseDoubleGrant
		if !rec.verdict.Certain {
			cause = CausePossible
		}
		a := rec.acq
		if a.Window {
			ks.kr.Counts.add(cause, 0)
		}
		v := Violation{Cause: cause, Event: a, Inside: nonNil(rec.against), InWindow: a.Window, ByCalls: true}
		c.violated(ks, v)
		ks.noEntry = keepFirst(ks.noEntry, ordered{v, rec.acqOrd})
		if cause == CauseDoubleGrant {
			ks.noEntryByCalls = keepFirst(ks.noEntryByCalls, ordered{v, rec.acqOrd})
			ks.kr.byCallsFound++
		}
	}
	if len(rec.candidates) > 0 && rec.end == nil && rec.released {
		c.written[rec.by] = rec
	}
}

// keepFirst inserts o in l, kept in the history's order and to listKept.
func keepFirst(l []ordered, o ordered) []ordered {
	i, _ := slices.BinarySearchFunc(l, o, func(a, b ordered) int { return a.ord.Compare(b.ord) })
	if i >= listKept {
		return l
	}
	l = slices.Insert(l, i, o)
	return l[:min(len(l), listKept)]
}

// violated counts a violation of the key, outside the window too.
func (c *checker) violated(ks *keyState, v Violation) {
	ks.kr.ViolationsFound++
	if !v.InWindow {
		c.r.Outside.add(v.Cause, 0)
	}
}

// resource steps one resource event through the model: its validity from
// its holder's own calls, the model's step, the lock's-calls verdict on
// an entry's acquisition, and what it broke.
func (ks *keyState) resource(c *checker, p pending) {
	e, kr := p.e, ks.kr
	ks.lastSeq = max(ks.lastSeq, e.Seq)
	rec := ks.leases[e.Token]
	fixed := ks.validity(e, rec)
	var before *state
	if c.ops && ks.events%segmentOps == 0 && ks.events > 0 {
		before = ks.state.clone()
	}
	res := stepOn(ks.state, fixed, c.drift)
	// The model's own verdict on the event, before the lock's calls add theirs.
	legal := res.cause == Safe
	if e.Op == history.OpEnter {
		res = judgeGrant(res, rec)
		if rec != nil {
			rec.entered = true
		}
	}
	if fixed.Window {
		kr.Counts.add(res.cause, res.outcome)
		if fixed.Op == history.OpWrite {
			switch {
			case fixed.Call > fixed.Valid || (rec != nil && rec.end != nil && fixed.Call > rec.end.Valid):
				kr.Counts.LateWrites++
			case rec != nil && rec.end == nil:
				rec.candidates = append(rec.candidates, fixed.Call)
			}
		}
	}
	if res.cause != Safe {
		v := Violation{Cause: res.cause, Event: fixed, InWindow: fixed.Window, ByCalls: res.byCalls != nil}
		for _, h := range res.others {
			if h.enter == nil {
				continue
			}
			v.Inside = append(v.Inside, h.enter)
			if h.renewed != nil {
				v.Inside = append(v.Inside, h.renewed)
			}
		}
		c.violated(ks, v)
		if len(ks.resViolations) < listKept {
			ks.resViolations = append(ks.resViolations, v)
		}
		if v.ByCalls && v.Cause == CauseDoubleGrant {
			kr.byCallsFound++
			if len(ks.resByCalls) < listKept {
				ks.resByCalls = append(ks.resByCalls, v)
			}
		}
	}
	if e.Out != history.OutFailed && res.outcome != e.Out && (e.Op == history.OpEnter || e.Op == history.OpWrite) {
		kr.DisagreementsFound++
		if len(ks.modelDis) < listKept {
			ks.modelDis = append(ks.modelDis, Disagreement{Event: fixed, Model: res.outcome, Recorded: e.Out})
		}
	}
	ks.state = res.next
	ks.segment(c, fixed, before, legal)
}

// validity takes a resource event's validity from its holder's own calls:
// an enter's from its acquire, a renewal notice's from the ok renewal
// that told it, a write's from the lock's report that the lease ended
// before it. An event whose recorded validity disagrees is reported, and
// the model goes by the calls.
func (ks *keyState) validity(e *history.Event, rec *leaseRec) *history.Event {
	if rec == nil {
		return e
	}
	want, ok := int64(0), false
	switch e.Op {
	case history.OpEnter:
		if rec.acq != nil {
			want, ok = rec.acq.Valid, true
		}
	case history.OpRenewed:
		// The latest ok renewal that returned before the notice.
		var from *history.Event
		for _, r := range rec.renewals {
			if r.Return <= e.Return && (from == nil || r.Return >= from.Return) {
				from = r
			}
		}
		if from != nil {
			want, ok = from.Valid, true
		}
	}
	if end := rec.end; e.Op == history.OpWrite && end != nil && end.Return <= e.Call && end.Valid < e.Valid {
		// The lock reported the lease ended before the write: the
		// write is judged by that end, as the run judged it.
		want, ok = end.Valid, true
	}
	if !ok || want == e.Valid {
		return e
	}
	ks.kr.DisagreementsFound++
	if len(ks.validityDis) < listKept {
		ks.validityDis = append(ks.validityDis, Disagreement{Event: e, Model: e.Out, Recorded: e.Out, CallsValid: want})
	}
	fixed := *e
	fixed.Valid = want
	return &fixed
}

// judgeGrant adds the lock's-calls verdict on the acquisition behind an
// enter, as the run does: a grant inside another token's lease is a double
// grant even where the resource saw nobody inside, or only an overrun; one
// that only may have been is counted apart.
func judgeGrant(res stepResult, rec *leaseRec) stepResult {
	if rec == nil || rec.acq == nil {
		return res
	}
	v := rec.verdict
	switch {
	case res.cause == CauseDoubleGrant:
	case v.Certain:
		res.cause, res.byCalls = CauseDoubleGrant, rec.acq
		res.others = []holderRef{{enter: rec.acq}, {enter: rec.against}}
	case res.cause == CauseOverrun:
	case v.Possible:
		res.cause, res.byCalls = CausePossible, rec.acq
		res.others = []holderRef{{enter: rec.acq}, {enter: rec.against}}
	}
	return res
}

func nonNil(e *history.Event) []*history.Event {
	if e == nil {
		return nil
	}
	return []*history.Event{e}
}

// segmentOps is how many events one segment holds: a key's verdict is its
// worst segment's, and Porcupine (drawing an illegal segment, or holding
// the replay to its search) keeps a bitset of the segment per step, so a
// hot key's hundred thousand events are taken as segments, each resuming
// from the state the last one ended in.
const segmentOps = 1000

// segment adds a stepped event to the key's segment; legal is the model's
// verdict on it (its step before the lock's calls were heard), before the
// model's state before it when the segment's operations are built.
//
// Why the replay is the linearizability check. A segment's operations are
// points (call = return) at strictly increasing times, in the resource's
// order: no two overlap, so the only order that respects real time is
// theirs, and Porcupine's search has one path to try: the model's step on
// each event from the state the last one left, from the resume state the
// segment starts in. The segment is linearizable exactly when every step
// is legal, which is what the replay above just did, with the same step
// (stepOn is step without the copy) from the same states. So the checker
// takes the replay's verdict instead of searching again, which cost a
// sixth of the check and three allocations an event; TestReplayIsPorcupine
// holds the two equal on every stored history.
//
// The budget (Options.Timeout) bounds that replay per key, all its
// segments together, as it bounded Porcupine's search: a segment opened
// once the key's replay had used its budget is unknown, as is one whose
// replay ran past it without finding an illegal step by then.
func (ks *keyState) segment(c *checker, e *history.Event, before *state, legal bool) {
	if ks.events%segmentOps == 0 {
		if ks.open {
			c.verdict(ks, ks.spent+time.Since(ks.stepping))
		}
		ks.open, ks.segOpened, ks.segIllAt = true, ks.spent+time.Since(ks.stepping), -1
		if c.ops {
			ks.cur = make([]porcupine.Operation, 0, segmentOps+1)
			clear(ks.clients)
			if ks.events > 0 {
				// A later segment starts from where the one before ended.
				t := max(e.Return-1, ks.last+1)
				ks.cur = append(ks.cur, porcupine.Operation{ClientId: 0, Input: before, Call: t, Return: t})
				ks.clients[[2]int{-1, -1}] = 0
				ks.last = t
			}
		}
	}
	ks.events++
	if !legal && ks.segIllAt < 0 {
		ks.segIllAt = ks.spent + time.Since(ks.stepping)
	}
	if !c.ops {
		return
	}
	t := max(e.Return, ks.last+1)
	ks.last = t
	id, ok := ks.clients[[2]int{e.Generator, e.Worker}]
	if !ok {
		id = len(ks.clients)
		ks.clients[[2]int{e.Generator, e.Worker}] = id
	}
	ks.cur = append(ks.cur, porcupine.Operation{ClientId: id, Input: e, Output: e.Out, Call: t, Return: t})
}

// verdict closes the key's open segment, spent being the key's replay
// time by then; a key's verdict is its worst segment's.
func (c *checker) verdict(ks *keyState, spent time.Duration) {
	budget := c.opts.Timeout
	got := porcupine.Ok
	switch {
	case budget > 0 && ks.segOpened >= budget:
		// Opened with the budget spent: not replayed within it.
		got = porcupine.Unknown
	case ks.segIllAt >= 0 && (budget == 0 || ks.segIllAt <= budget):
		got = porcupine.Illegal
	case budget > 0 && spent > budget:
		got = porcupine.Unknown
	}
	ops := ks.cur
	ks.open, ks.cur = false, nil
	if c.opts.crossCheck && got != porcupine.Unknown && porcupine.CheckOperations(c.r.model, ops) != (got == porcupine.Ok) {
		c.mismatch++
	}
	if got == porcupine.Ok {
		return
	}
	if got == porcupine.Illegal || ks.porc == porcupine.Ok {
		ks.porc = got
	}
	if got == porcupine.Illegal {
		ks.illegalFound++
		if c.opts.Visualize && len(ks.illegal) < maxVisualized {
			ks.illegal = append(ks.illegal, ops)
		}
	}
}

// finish steps what is left and makes the report.
func (c *checker) finish(faults []history.Fault, trailer *history.Trailer) *Report {
	c.advance(math.MaxInt64)
	keys := make([]*keyState, 0, len(c.keys))
	for _, ks := range c.keys {
		for tok, rec := range ks.leases {
			c.letGo(ks, rec)
			delete(ks.leases, tok)
		}
		if ks.open {
			c.verdict(ks, ks.spent)
		}
		keys = append(keys, ks)
	}
	for _, rec := range c.written {
		rec.candidates = nil
	}
	r := c.r
	r.Faults, r.Trailer, r.Complete = faults, trailer, trailer != nil
	r.mismatch = c.mismatch
	slices.SortFunc(keys, func(a, b *keyState) int {
		return cmp.Or(cmp.Compare(a.kr.Key.Generator, b.kr.Key.Generator), cmp.Compare(a.kr.Key.Key, b.kr.Key.Key))
	})
	for _, ks := range keys {
		kr := ks.kr
		r.CheckedKeys++
		r.CheckedEvents += ks.events
		r.Counts.DoubleGrants += kr.Counts.DoubleGrants
		r.Counts.Overruns += kr.Counts.Overruns
		r.Counts.StaleAccepted += kr.Counts.StaleAccepted
		r.Counts.FencingRejected += kr.Counts.FencingRejected
		r.Counts.Possible += kr.Counts.Possible
		r.Counts.LateWrites += kr.Counts.LateWrites
		kr.Violations = ks.resViolations
		for _, o := range ks.noEntry {
			kr.Violations = append(kr.Violations, o.v)
		}
		kr.byCalls = ks.resByCalls
		for _, o := range ks.noEntryByCalls {
			kr.byCalls = append(kr.byCalls, o.v)
		}
		kr.Disagreements = append(ks.validityDis, ks.modelDis...)
		kr.Porcupine = ks.porc
		switch {
		case ks.porc == porcupine.Illegal:
			r.Porcupine = porcupine.Illegal
		case ks.porc == porcupine.Unknown:
			r.Unknown = append(r.Unknown, kr.Key)
			if r.Porcupine == porcupine.Ok {
				r.Porcupine = porcupine.Unknown
			}
		}
		r.illegalFound += ks.illegalFound
		for _, ops := range ks.illegal {
			if len(r.illegal) < maxVisualized {
				r.illegal = append(r.illegal, segment{key: kr, ops: ops})
			}
		}
		if kr.ViolationsFound > 0 || kr.DisagreementsFound > 0 {
			r.Keys = append(r.Keys, kr)
		}
	}
	return r
}
