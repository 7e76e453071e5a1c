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
		c.acquiringFrom(0)
		call := time.Now()
		tok := "t" + strconv.Itoa(k)
		if _, v := c.acquired(0, k, tok, call, call.Add(time.Second)); v.Certain || v.Possible {
			t.Fatalf("key %d: %+v on a fresh key", k, v)
		}
		c.releasing(k, tok)
		c.released(k, tok)
	}
	kept := 0
	for i := range c.shards {
		kept += len(c.shards[i].keys)
	}
	if kept > keys/2 {
		t.Errorf("%d keys kept after %d released ones", kept, keys)
	}
	c.acquiringFrom(0)
	now := time.Now()
	c.acquired(0, 7, "a", now, now.Add(time.Second))
	c.acquiringFrom(1)
	call := time.Now()
	if _, v := c.acquired(1, 7, "b", call, call.Add(time.Second)); !v.Certain || v.Against != "a" {
		t.Errorf("second grant inside the first's lease: %+v", v)
	}
}
