package check

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/lockbench/lockbench/bench/history"
)

// synthOpts shape a synthetic history: a lease lock over keys, taken by
// workers one section at a time, that now and then grants a key twice,
// lets a holder overrun its lease, renews, loses a lease with its session,
// and fences; its events reach the file the way the run's writer puts them
// there (each worker's in order, in buffers interleaved as they fill).
type synthOpts struct {
	seed            uint64
	workers, keys   int
	sections        int
	fencing         bool
	shared          bool
	generators      int
	recordOutcomes  bool
	bufMin, bufSize int
}

// synthEvent is an event with the worker-local order it was added in.
type synthEvent struct {
	e history.Event
	// at is when the worker added it (its step time).
	at int64
}

// synth builds a history from o, with its events in file order.
func synth(o synthOpts) *history.History {
	rng := rand.New(rand.NewPCG(o.seed, o.seed^0x9e37))
	ttl := 100 * ms
	drift := ttl/100 + 2*ms
	resource := "in-process"
	if o.shared {
		resource = "redis://127.0.0.1:1"
	}
	h := &history.History{Header: history.Header{Schema: history.Schema, RunID: fmt.Sprintf("synth-%d", o.seed), Generators: o.generators,
		Origin: time.Unix(1_700_000_000, 0).UTC(), KeyPrefix: "s:", Lock: "synth", Fencing: o.fencing, TTLNS: ttl, DriftNS: drift,
		Resource: resource, Workers: o.workers}}
	type gw struct{ g, w int }
	perWorker := map[gw][]synthEvent{}
	busy := map[gw]int64{}
	type keyID struct{ g, k int }
	resEvents := map[keyID][]*history.Event{}
	var fence int64
	tok := 0
	windowStart, windowEnd := 50*ms, int64(o.sections)*4*ms
	// Each key's timeline: sections one after another, with now and then
	// a grant inside the last lease (a double grant), or a holder that
	// stays past its lease (an overrun).
	for k := range o.keys {
		for g := range o.generators {
			kid := keyID{g, k}
			if o.shared {
				kid.g = -1
			}
			t := int64(rng.IntN(20)) * ms
			for range o.sections / o.keys {
				w := gw{g, rng.IntN(o.workers)}
				if o.shared {
					w.g = rng.IntN(o.generators)
				}
				call := max(t, busy[w]+ms/10)
				if rng.IntN(4) == 0 {
					// A contended attempt before the acquisition.
					perWorker[w] = append(perWorker[w], synthEvent{history.Event{Generator: w.g, Worker: w.w, Key: k, Op: history.OpAcquire,
						Out: history.OutContended, Window: call > windowStart, Call: call, Return: call + ms/5}, call + ms/5})
					call += ms / 4
				}
				ret := call + int64(rng.IntN(2000))*1000
				tok++
				token := fmt.Sprintf("%016x%016x", uint64(tok)*0x9e3779b97f4a7c15, tok)
				valid := call + ttl
				win := ret > windowStart && ret < windowEnd
				fence++
				f := int64(0)
				if o.fencing {
					f = fence
				}
				add := func(e history.Event, at int64) *history.Event {
					e.Generator, e.Worker, e.Key, e.Token, e.Window, e.Fence = w.g, w.w, k, token, win, f
					perWorker[w] = append(perWorker[w], synthEvent{e, at})
					return &perWorker[w][len(perWorker[w])-1].e
				}
				add(history.Event{Op: history.OpAcquire, Out: history.OutOK, Call: call, Return: ret, Valid: valid}, ret)
				enterAt := ret + ms/10
				enter := history.Event{Op: history.OpEnter, Out: history.OutOK, Call: enterAt, Return: enterAt, Valid: valid, Granted: ret}
				now := enterAt
				hold := int64(rng.IntN(30)) * ms
				switch rng.IntN(12) {
				case 0:
					hold = ttl + int64(rng.IntN(50))*ms // overrun
				case 1:
					hold = 0
				}
				var evs []history.Event
				evs = append(evs, enter)
				if rng.IntN(5) == 0 {
					rc := now + ms
					rr := rc + ms/2
					valid = rc + ttl
					add(history.Event{Op: history.OpRenew, Out: history.OutOK, Call: rc, Return: rr, Valid: valid}, rr)
					evs = append(evs, history.Event{Op: history.OpRenewed, Out: history.OutOK, Call: rr + 1, Return: rr + 1, Valid: valid})
					now = rr + 1
				}
				writeAt := now + hold
				if rng.IntN(15) == 0 {
					// The lock reports the lease ended with its session
					// before the write.
					end := now + ms
					add(history.Event{Op: history.OpLost, Out: history.OutLost, Call: end, Return: writeAt - 1, Valid: end}, writeAt-1)
				}
				evs = append(evs, history.Event{Op: history.OpWrite, Out: history.OutOK, Call: writeAt, Return: writeAt + 1, Valid: valid})
				exitAt := writeAt + 2
				if rng.IntN(20) == 0 {
					evs = append(evs, history.Event{Op: history.OpAbandon, Out: history.OutOK, Call: exitAt, Return: exitAt})
				} else {
					evs = append(evs, history.Event{Op: history.OpExit, Out: history.OutOK, Call: exitAt, Return: exitAt})
				}
				for _, e := range evs {
					resEvents[kid] = append(resEvents[kid], add(e, e.Return))
				}
				relCall := exitAt + 1
				relRet := relCall + int64(rng.IntN(1000))*1000
				relOut := history.OutOK
				if relCall > valid {
					relOut = history.OutLost
				}
				add(history.Event{Op: history.OpRelease, Out: relOut, Call: relCall, Return: relRet}, relCall)
				if relOut == history.OutLost && rng.IntN(3) == 0 {
					// A session's end heard after the write.
					add(history.Event{Op: history.OpLost, Out: history.OutLost, Call: writeAt - ms, Return: relRet + 1, Valid: writeAt - ms}, relRet+1)
					relRet++
				}
				busy[w] = relRet
				// The next grant: after the release, or now and then inside
				// this lease (the lock broke).
				t = relCall + int64(rng.IntN(500))*1000
				if rng.IntN(10) == 0 {
					t = ret + int64(rng.IntN(20))*ms
				}
			}
		}
	}
	// The resource stamps a key's events in time order.
	for _, evs := range resEvents {
		slices.SortStableFunc(evs, func(a, b *history.Event) int { return cmp.Compare(a.Return, b.Return) })
		var st *state
		st = &state{}
		for i, e := range evs {
			e.Seq = uint64(i + 1)
			if o.recordOutcomes {
				res := step(st, e, drift)
				if e.Op == history.OpEnter || e.Op == history.OpWrite {
					e.Out = res.outcome
				}
				st = res.next
			}
		}
	}
	// Each worker's events in the order it added them, into the file in
	// buffers as they fill.
	var keys []gw
	for w, evs := range perWorker {
		slices.SortStableFunc(evs, func(a, b synthEvent) int { return cmp.Compare(a.at, b.at) })
		keys = append(keys, w)
	}
	slices.SortFunc(keys, func(a, b gw) int { return cmp.Or(cmp.Compare(a.g, b.g), cmp.Compare(a.w, b.w)) })
	type chunk struct {
		at  int64
		evs []synthEvent
	}
	var chunks []chunk
	for _, w := range keys {
		evs := perWorker[w]
		for len(evs) > 0 {
			n := min(len(evs), o.bufMin+rng.IntN(o.bufSize))
			chunks = append(chunks, chunk{evs[n-1].at, evs[:n]})
			evs = evs[n:]
		}
	}
	slices.SortStableFunc(chunks, func(a, b chunk) int { return cmp.Compare(a.at, b.at) })
	for _, c := range chunks {
		for _, e := range c.evs {
			h.Events = append(h.Events, e.e)
		}
	}
	h.Faults = []history.Fault{{Spec: "at=1s pause", StartNS: 1000 * ms, EndNS: 1200 * ms}}
	h.Trailer = &history.Trailer{Events: int64(len(h.Events)), WindowStartNS: windowStart, WindowEndNS: windowEnd}
	return h
}
