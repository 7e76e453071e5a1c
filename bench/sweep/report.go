package sweep

import (
	"fmt"

	"github.com/lockbench/lockbench/results"
)

// CapacityCurves turns capacity searches into the report's curves.
func CapacityCurves(caps []Capacity, loadName string) []results.Curve {
	var out []results.Curve
	for _, cp := range caps {
		cv := results.Curve{Label: cp.Label, LoadName: loadName, Saturation: -1, Knee: -1}
		for i, s := range cp.Steps {
			cv.Points = append(cv.Points, results.CurvePoint{Load: s.Load, Throughput: s.Throughput, P99US: s.P99US, MetSLO: s.MetSLO, RunID: s.RunID})
			if cp.Saturation != nil && s.RunID == cp.Saturation.RunID {
				cv.Saturation = i
			}
			if cp.Knee != nil && s.RunID == cp.Knee.RunID {
				cv.Knee = i
			}
		}
		out = append(out, cv)
	}
	return out
}

// TuneHeatMaps draws expiry rate and blocked time over TTL × renewal.
func TuneHeatMaps(g Grid, cells []TuneCell, rec Recommendation) []results.HeatMap {
	ttls, renews := g.Axes[0].Values, g.Axes[1].Values
	rate := results.HeatMap{Title: "share of work that outlived its lease", XLabel: "renew-every", YLabel: "ttl", X: renews, Y: ttls, Best: [2]int{-1, -1},
		Legend: "expired during work or aborted, over acquisitions; the outlined cell is the recommendation"}
	blocked := results.HeatMap{Title: "p99 time a crashed holder blocked its key", XLabel: "renew-every", YLabel: "ttl", X: renews, Y: ttls, Best: [2]int{-1, -1},
		Legend: "µs; where no holder crashed, the TTL bounds it"}
	for _, hm := range []*results.HeatMap{&rate, &blocked} {
		hm.Value = make([][]float64, len(ttls))
		hm.Text = make([][]string, len(ttls))
		for y := range ttls {
			hm.Value[y] = make([]float64, len(renews))
			hm.Text[y] = make([]string, len(renews))
		}
	}
	for _, c := range cells {
		y, x := indexOf(ttls, c.TTL), indexOf(renews, c.RenewEvery)
		if y < 0 || x < 0 {
			continue
		}
		rate.Value[y][x], rate.Text[y][x] = c.ExpiryRate, fmt.Sprintf("%s (%d/%d)", results.FigureText("expiry_rate", c.ExpiryRate), c.Expired, c.Acquired)
		blocked.Value[y][x], blocked.Text[y][x] = c.BlockedP99US, results.FigureText("blocked.p99", c.BlockedP99US)
		if rec.Best != nil && rec.Best.TTL == c.TTL && rec.Best.RenewEvery == c.RenewEvery {
			rate.Best, blocked.Best = [2]int{y, x}, [2]int{y, x}
		}
	}
	return []results.HeatMap{rate, blocked}
}

func indexOf(xs []string, v string) int {
	for i, x := range xs {
		if x == v {
			return i
		}
	}
	return -1
}
