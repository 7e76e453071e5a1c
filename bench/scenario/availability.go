package scenario

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/lockbench/lockbench/results"
)

// writeAvailability prints, per variant, the unavailability window: the
// longest time without an acquisition in each trial (median and worst
// over trials), beside the share of attempts that failed.
func writeAvailability(w io.Writer, v Verdict) error {
	fmt.Fprintln(w, "unavailability: the longest time without any acquisition in a trial (exact from 1s up; under 1s means no gap reached a second)")
	var (
		median   = results.FigureColumn("longest_gap_s", "longest gap\n(median)")
		worst    = results.FigureColumn("longest_gap_s", "longest gap\n(worst)")
		perTrial = results.FigureColumn("longest_gap_s", "per trial")
		failed   = results.FigureColumn("error_share", "failed\nattempts")
	)
	gap, _ := perTrial.Figure()
	t := results.NewTable(w, results.LabelColumn("variant"), median, worst, perTrial, failed)
	for _, vv := range v.Variants {
		// A variant's trials time no gap where its scenario has no series.
		med, most, per := results.NotApplicable, results.NotApplicable, results.NotApplicable
		if len(vv.GapsS) > 0 {
			med, most = median.Text(results.Median(vv.GapsS)), worst.Text(slices.Max(vv.GapsS))
			gaps := make([]string, len(vv.GapsS))
			for i, g := range vv.GapsS {
				// Bare numbers: the unit is the neighbouring columns'.
				gaps[i] = gap.Number(g)
			}
			per = strings.Join(gaps, " ")
		}
		_ = t.Append(vv.Variant.Name, med, most, per, failed.Text(vv.ErrorShare))
	}
	return t.Render()
}
