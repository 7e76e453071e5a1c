package sweep

import (
	"fmt"
	"io"
	"time"

	"github.com/lockbench/lockbench/results"
)

// TuneCell is one TTL × renewal-interval cell of a tuning sweep.
type TuneCell struct {
	TTL        string   `json:"ttl"`
	RenewEvery string   `json:"renew_every"`
	RunIDs     []string `json:"runs"`
	// Acquired is acquisitions over the cell's runs.
	Acquired int64 `json:"acquired"`
	// Expired counts work that outlived its lease (expired during work, or
	// aborted when a renewal found the lease lost).
	Expired int64 `json:"expired"`
	// ExpiryRate is Expired / Acquired.
	ExpiryRate float64 `json:"expiry_rate"`
	// Overlaps are two holders inside at once.
	Overlaps int64 `json:"overlaps"`
	// RenewPerS is renewal commands per second.
	RenewPerS float64 `json:"renew_per_s"`
	// BlockedP99US is the p99 time a crashed holder blocked its key (0 if no
	// holder crashed); the TTL bounds it.
	BlockedP99US float64 `json:"blocked_p99_us"`
	// BlockedSamples is how many crashes were measured.
	BlockedSamples int64 `json:"blocked_samples"`
	// Meets is true when the expiry rate is under the target and nothing overlapped.
	Meets bool `json:"meets"`
}

// TuneCells reduces a TTL × renew-every sweep to its cells.
func TuneCells(g Grid, crs []CellResult, maxRate float64) []TuneCell {
	var out []TuneCell
	for _, cr := range crs {
		c := TuneCell{TTL: coord(g, cr.Cell, "ttl"), RenewEvery: coord(g, cr.Cell, "renew-every")}
		var secs float64
		var renewed int64
		var blocked []float64
		for _, r := range cr.Results {
			c.RunIDs = append(c.RunIDs, r.ID)
			c.Acquired += r.Contention.Acquired
			c.Expired += r.Incidents.ExpiredDuringWork + r.Incidents.WorkAborted
			c.Overlaps += r.Incidents.Overlaps
			renewed += r.Ops[results.OpRenew].Count
			secs += r.DurationS
			if b := r.Ops[results.OpBlocked]; b.Count > 0 {
				blocked = append(blocked, b.LatencyUS.P99)
				c.BlockedSamples += b.Count
			}
		}
		if c.Acquired > 0 {
			c.ExpiryRate = float64(c.Expired) / float64(c.Acquired)
		}
		if secs > 0 {
			c.RenewPerS = float64(renewed) / secs
		}
		c.BlockedP99US = results.Median(blocked)
		c.Meets = c.Acquired > 0 && c.ExpiryRate <= maxRate && c.Overlaps == 0
		out = append(out, c)
	}
	return out
}

func coord(g Grid, c Cell, flag string) string {
	for i, a := range g.Axes {
		if a.Flag == flag {
			return c.Coords[i]
		}
	}
	return g.Base.Get(flag)
}

// blockedBound is the cell's blocked time, or its TTL where no crash was seen:
// an abandoned lease blocks its key for at most the TTL.
func (c TuneCell) blockedBound() float64 {
	if c.BlockedSamples > 0 {
		return c.BlockedP99US
	}
	d, _ := time.ParseDuration(c.TTL)
	return float64(d / time.Microsecond)
}

// Recommendation is tune-ttl's verdict.
type Recommendation struct {
	// Best is the recommended cell, nil when none met the target.
	Best *TuneCell `json:"best,omitempty"`
	// Closest is the cell with the lowest expiry rate when none met it.
	Closest *TuneCell `json:"closest,omitempty"`
	// Why is the one-sentence explanation.
	Why string `json:"why"`
}

// Recommend picks the cell with the shortest blocked time among those whose
// expiry rate is under maxRate with no overlaps; ties go to less renewal traffic.
func Recommend(cells []TuneCell, maxRate float64) Recommendation {
	var best *TuneCell
	for i := range cells {
		c := &cells[i]
		if !c.Meets {
			continue
		}
		if best == nil || c.blockedBound() < best.blockedBound() ||
			(c.blockedBound() == best.blockedBound() && c.RenewPerS < best.RenewPerS) {
			best = c
		}
	}
	if best != nil {
		return Recommendation{Best: best, Why: fmt.Sprintf(
			"TTL %s with renewal %s: %d of %d acquisitions outlived their lease (target ≤ %g; with this many samples the 95%% upper bound is %.2g), "+
				"and a crashed holder blocks its key for %s at p99, the shortest of the cells that met the target, for %.1f renewals/s.",
			best.TTL, renewLabel(best.RenewEvery), best.Expired, best.Acquired, maxRate, upperBound(best.Expired, best.Acquired),
			results.FormatUS(best.blockedBound()), best.RenewPerS)}
	}
	var closest *TuneCell
	for i := range cells {
		c := &cells[i]
		if c.Acquired > 0 && (closest == nil || c.ExpiryRate < closest.ExpiryRate ||
			(c.ExpiryRate == closest.ExpiryRate && c.Overlaps < closest.Overlaps)) {
			closest = c
		}
	}
	if closest == nil {
		return Recommendation{Why: "No cell acquired any lock, so nothing can be recommended."}
	}
	return Recommendation{Closest: closest, Why: fmt.Sprintf(
		"No cell met the target of %g with no overlaps; closest: TTL %s with renewal %s, %d of %d acquisitions (%.2g) outlived their lease and %d overlapped: lengthen the TTL or renew more often.",
		maxRate, closest.TTL, renewLabel(closest.RenewEvery), closest.Expired, closest.Acquired, closest.ExpiryRate, closest.Overlaps)}
}

// upperBound is the 95% upper bound on a rate from k events in n trials
// (the "rule of three" for k = 0, k+3 over n as a rough bound otherwise).
func upperBound(k, n int64) float64 {
	if n == 0 {
		return 1
	}
	return min(1, float64(k+3)/float64(n))
}

func renewLabel(s string) string {
	if s == "" || s == "0" || s == "off" {
		return "off"
	}
	return "every " + s
}

// WriteTune prints the cells and the recommendation.
func WriteTune(w io.Writer, cells []TuneCell, rec Recommendation) error {
	t := results.NewTable(w, "ttl", "renew", "acquired", "expired", "expiry rate", "overlaps", "renew/s", "blocked p99", "meets")
	for _, c := range cells {
		blocked := "≤ " + results.FormatUS(c.blockedBound()) + " (ttl)"
		if c.BlockedSamples > 0 {
			blocked = results.FormatUS(c.BlockedP99US)
		}
		meets := "no"
		if c.Meets {
			meets = "yes"
		}
		if rec.Best != nil && rec.Best.TTL == c.TTL && rec.Best.RenewEvery == c.RenewEvery {
			meets = "RECOMMENDED"
		}
		_ = t.Append(c.TTL, renewLabel(c.RenewEvery), c.Acquired, c.Expired, fmt.Sprintf("%.2g", c.ExpiryRate), c.Overlaps,
			fmt.Sprintf("%.1f", c.RenewPerS), blocked, meets)
	}
	if err := t.Render(); err != nil {
		return err
	}
	fmt.Fprintln(w, rec.Why)
	return nil
}
