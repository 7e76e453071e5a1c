package results

import "fmt"

// DerivedFigures are the figures tables show that no single result holds:
// plans derive them from several runs, from a run and its fault, or from a
// count and its confidence bound. They are defined here, beside the
// catalogue, so that each prints at one precision wherever it appears;
// --columns, --assert and merge do not take them (Value says why), since
// they are not read from a result.
func DerivedFigures() []Figure {
	d := func(name, label, unit string, better string) Figure {
		return Figure{Name: name, Key: name, Label: label, Unit: unit, Better: better, Group: GroupDerived,
			read: func(*Result) (float64, error) {
				return 0, fmt.Errorf("%s is derived by the command that shows it, not read from one result", name)
			}}
	}
	with := func(f Figure, precision, significant int) Figure {
		f.Precision, f.Significant = precision, significant
		return f
	}
	return []Figure{
		// Availability under a fault (lock-cost --with-fault, the rulebook's
		// verdict.AvailabilityOf): shares of whole seconds of the series.
		with(d("availability", "acquiring in the fault's span", UnitShare, "higher"), WholeNumbers, 0),
		with(d("availability_window", "acquiring in the window", UnitShare, "higher"), WholeNumbers, 0),
		with(d("availability.longest_gap_s", "longest gap without an acquisition", UnitSeconds, "lower"), 1, 0),
		with(d("throughput_kept", "throughput kept under the fault", UnitShare, "higher"), 1, 0),
		// Scenario trials: the exact longest gap between acquisitions
		// (results.LongestGap) and the share of attempts that failed.
		with(d("longest_gap_s", "longest gap without an acquisition", UnitSeconds, "lower"), 2, 0),
		with(d("error_share", "share of attempts failed", UnitShare, "lower"), 1, 0),
		// Rates of rare events span orders of magnitude: significant digits.
		with(d("expiry_rate", "expiry rate", UnitRatio, "lower"), 0, 2),
		with(d("expiry_rate_upper_95", "expiry rate, 95% upper bound", UnitRatio, "lower"), 0, 2),
		with(d("per_10k_acquisitions", "per 10,000 acquisitions", UnitRatio, "lower"), 0, 3),
		with(d("double_grants_per_failover", "double grants per failover", UnitRatio, "lower"), 0, 2),
		with(d("holders_inside_at_kill", "holders inside at the kill", UnitRatio, ""), 0, 2),
		with(d("unavailable_s", "unavailable after the kill", UnitSeconds, "lower"), 2, 0),
		with(d("renew_per_s", "renewals/s", UnitPerS, ""), 1, 0),
		// renewal-check: the 95% interval of the share of trials that overran.
		with(d("trials_overran", "share of trials that overran", UnitShare, "lower"), WholeNumbers, 0),
		// The work profile advise was given: the share of holders that pause.
		with(d("holders_pausing", "share of holders that pause", UnitRatio, ""), 0, 3),
	}
}

// GroupDerived is the group of DerivedFigures.
const GroupDerived = "derived"

// FigureNamed finds a figure of the catalogue (by name or alias, errors.KIND
// included) or of DerivedFigures; ok is false for a name neither defines.
func FigureNamed(name string) (Figure, bool) {
	if f, err := LookupFigure(name); err == nil {
		return f, true
	}
	for _, f := range DerivedFigures() {
		if f.Name == name {
			return f, true
		}
	}
	return Figure{}, false
}

// FigureText is v as the figure named prints it: the one precision of that
// figure wherever it appears (tables, verdict lines, HTML). A name neither
// the catalogue nor DerivedFigures defines prints v plainly; the table
// column test refuses such names in review.
func FigureText(name string, v float64) string {
	f, ok := FigureNamed(name)
	if !ok {
		return fmt.Sprint(v)
	}
	return f.Format(v)
}
