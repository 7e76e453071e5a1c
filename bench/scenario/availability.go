package scenario

import (
	"fmt"
	"io"
	"slices"

	"github.com/lockbench/lockbench/results"
)

// writeAvailability prints, per variant, the unavailability window: the
// longest time without an acquisition in each trial (median and worst
// over trials), beside the share of attempts that failed.
func writeAvailability(w io.Writer, v Verdict) error {
	fmt.Fprintln(w, "unavailability: the longest time without any acquisition in a trial (exact from 1s up; under 1s means no gap reached a second)")
	t := results.NewTable(w, "variant", "longest gap\n(median)", "longest gap\n(worst)", "per trial", "failed\nattempts")
	for _, vv := range v.Variants {
		med, worst, per := "-", "-", "-"
		if len(vv.GapsS) > 0 {
			med = fmt.Sprintf("%.2fs", results.Median(vv.GapsS))
			worst = fmt.Sprintf("%.2fs", slices.Max(vv.GapsS))
			per = ""
			for i, g := range vv.GapsS {
				if i > 0 {
					per += " "
				}
				per += fmt.Sprintf("%.2f", g)
			}
		}
		_ = t.Append(vv.Variant.Name, med, worst, per, fmt.Sprintf("%.1f%%", 100*vv.ErrorShare))
	}
	return t.Render()
}
