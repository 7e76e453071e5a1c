package bench

import (
	"strconv"
	"testing"
	"time"
)

// TestCallLedgersForgetReleasedKeys: with a key per acquisition, the
// ledgers keep no more than a sweep's worth of released keys, and a double
// grant by the lock's calls is still found on a key in use.
func TestCallLedgersForgetReleasedKeys(t *testing.T) {
	const keys = 4 * resourceShards * sweepEvery
	c := newCallLedgers(3*time.Millisecond, time.Now(), 2)
	for k := range keys {
		c.acquiringFrom(0, time.Now())
		call := time.Now()
		tok := "t" + strconv.Itoa(k)
		_, v, led := c.acquired(0, k, tok, call, call.Add(time.Second))
		if v.Certain || v.Possible {
			t.Fatalf("key %d: %+v on a fresh key", k, v)
		}
		c.releasing(led, tok)
		c.released(led, tok)
	}
	kept := 0
	for i := range c.shards {
		kept += len(c.shards[i].keys)
	}
	if kept > keys/2 {
		t.Errorf("%d keys kept after %d released ones", kept, keys)
	}
	c.acquiringFrom(0, time.Now())
	now := time.Now()
	c.acquired(0, 7, "a", now, now.Add(time.Second))
	c.acquiringFrom(1, time.Now())
	call := time.Now()
	if _, v, _ := c.acquired(1, 7, "b", call, call.Add(time.Second)); !v.Certain || v.Against != "a" {
		t.Errorf("second grant inside the first's lease: %+v", v)
	}
}

// TestHeldLedgerOutlivesSweeps: a key's ledger handed out with a lease is
// the key's ledger in the map until that lease's release returns, however
// many sweeps other keys' releases make meanwhile; the release then lets a
// later acquisition of the key in without a verdict.
func TestHeldLedgerOutlivesSweeps(t *testing.T) {
	c := newCallLedgers(time.Millisecond, time.Now(), 2)
	const held = 7
	now := time.Now()
	_, _, led := c.acquired(0, held, "held", now, now.Add(time.Hour))
	for k := range 4 * resourceShards * sweepEvery {
		key := held + 1 + k
		call := time.Now()
		tok := "t" + strconv.Itoa(k)
		_, _, other := c.acquired(1, key, tok, call, call.Add(time.Second))
		c.releasing(other, tok)
		c.released(other, tok)
	}
	if got := c.shards[held%resourceShards].keys[held]; got != led.ledger {
		t.Fatalf("key %d's ledger in the map is %p, the held lease's is %p", held, got, led.ledger)
	}
	c.releasing(led, "held")
	c.released(led, "held")
	call := time.Now()
	if _, v, _ := c.acquired(1, held, "next", call, call.Add(time.Second)); v.Certain || v.Possible {
		t.Errorf("acquisition after the release returned: %+v", v)
	}
}

// TestCallLedgersWatermarkHeldByAcquisition: a worker marked acquiring from
// a time holds the watermark there, so a lease released after that time is
// kept for its acquisition to be judged against; one marked done lets it go.
func TestCallLedgersWatermarkHeldByAcquisition(t *testing.T) {
	origin := time.Now()
	c := newCallLedgers(time.Millisecond, origin, 3)
	from := origin.Add(5 * time.Millisecond)
	now := origin.Add(time.Second)
	c.acquiringFrom(1, from)
	if got, want := c.watermark(now), c.ns(from); got != want {
		t.Errorf("watermark %d while worker 1 acquires from %d", got, want)
	}
	c.acquiringFrom(2, origin) // a start at the origin still marks a worker acquiring
	if got := c.watermark(now); got > c.ns(from) || got < 0 {
		t.Errorf("watermark %d with worker 2 acquiring from the origin", got)
	}
	c.notAcquiring(1)
	c.notAcquiring(2)
	if got, want := c.watermark(now), c.ns(now); got != want {
		t.Errorf("watermark %d with no acquisition in flight, want now %d", got, want)
	}
}
