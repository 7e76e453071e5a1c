package verdict

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// DefaultLevel is the share of trials a word of safety must bound the harm
// under, at 95%, unless a command's --safety-level says otherwise.
const DefaultLevel = 0.10

// Class is what k harmful trials of n conclusive ones let a word say.
type Class uint8

// The classes of a k-of-n decision.
const (
	// NoEvidence: no conclusive trial, so no word but "inconclusive".
	NoEvidence Class = iota
	// Harm: at least one trial showed the harm; the word of harm is earned
	// by that observation, whatever its rate.
	Harm
	// SafeShown: no trial showed it and the rate's 95% upper bound is within
	// the level.
	SafeShown
	// Undecided: no trial showed it, but too few trials bound the rate
	// within the level; more trials would decide.
	Undecided
)

var classNames = [...]string{NoEvidence: "inconclusive", Harm: "harm", SafeShown: "safety", Undecided: "undecided"}

// String names the class.
func (c Class) String() string { return classNames[c] }

// MarshalText writes the name, for JSON.
func (c Class) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// UndecidedWord is the word of a cell, variant or panel that the evidence
// does not decide.
const UndecidedWord = "undecided"

// TrialDecision is one k-of-n decision: how many conclusive trials showed
// the harm, the rate's exact interval, and what the evidence lets a word
// say at the level.
type TrialDecision struct {
	Class Class `json:"class"`
	// Harm trials of N conclusive showed the harm.
	Harm int `json:"harm_trials"`
	N    int `json:"conclusive_trials"`
	// Rate is the harm's share of trials with its 95% interval.
	Rate TrialRate `json:"-"`
	// Level is the share the upper bound must be within for a word of
	// safety.
	Level float64 `json:"level"`
	// More is, for Undecided, how many more conclusive trials without harm
	// would bring the upper bound within the level; 0 otherwise.
	More int `json:"more_trials,omitempty"`
}

// DecideTrials is the one rule every k-of-n word follows: renewal-check's
// cells, scenario's variants, failover-map's cells, tune-ttl and advise.
//   - no conclusive trial: NoEvidence;
//   - a word of harm needs at least one observed case (harm > 0);
//   - a word of safety needs the 95% upper bound on the harm's share of
//     trials within level;
//   - anything else is Undecided, with the trials that would decide it.
//
// So the same command run twice can give harm and undecided, or safety and
// undecided, but harm and safety together only where the true rate lies
// between an observed case and the level.
func DecideTrials(harm, n int, level float64) TrialDecision {
	d := TrialDecision{Harm: harm, N: n, Level: level, Rate: RateOver(harm, n)}
	switch {
	case n <= 0:
		d.Class = NoEvidence
	case harm > 0:
		d.Class = Harm
	case d.Rate.High <= level:
		d.Class = SafeShown
	default:
		d.Class = Undecided
		d.More = max(1, TrialsToBound(level)-n)
	}
	return d
}

// Informative says whether the interval says anything: one that spans
// 0%–100% (nothing measured, or too little) is never printed as a figure.
func (d TrialDecision) Informative() bool {
	return d.N > 0 && (d.Rate.Low > 0.005 || d.Rate.High < 0.995)
}

// Interval is the harm's share as a figure, "0%–43%" (one-sided: "≤ 63%",
// "≥ 5.0%"), or "" where it is not informative.
func (d TrialDecision) Interval() string {
	if !d.Informative() {
		return ""
	}
	switch {
	case d.Harm == 0:
		return "≤" + percentRounded(d.Rate.High, true)
	case d.Harm == d.N:
		return "≥" + percentRounded(d.Rate.Low, false)
	}
	return percentRounded(d.Rate.Low, false) + "–" + percentRounded(d.Rate.High, true)
}

// percentRounded prints a bound as percent does, rounded outward (up for
// an upper bound, down for a lower) so that a bound just over the level
// never prints as the level itself. The nudge keeps a bound that is a whole
// figure already (5% as 0.05000000001) from moving a step.
func percentRounded(x float64, up bool) string {
	scale, format := 100.0, "%.0f%%"
	if x < 0.1 {
		scale, format = 1000, "%.1f%%"
	}
	v := math.Floor(x*scale + 1e-9)
	if up {
		v = math.Ceil(x*scale - 1e-9)
	}
	if scale == 1000 {
		v /= 10
	}
	return fmt.Sprintf(format, v)
}

// Word is the decided word: harm or safe as the class earns it,
// UndecidedWord, or inconclusive without evidence.
func (d TrialDecision) Word(harm, safe string) string {
	switch d.Class {
	case Harm:
		return harm
	case SafeShown:
		return safe
	case Undecided:
		return UndecidedWord
	}
	return string(Inconclusive)
}

// Short is the word with its count, as a cell shows it: "overran 2/6",
// "caught 30/30", "undecided 0/3 (≤63%)", where shown is how many trials
// the decided word counts (the harm's for harm, the safe outcome's for
// safety).
func (d TrialDecision) Short(harm, safe string, shown int) string {
	switch d.Class {
	case Harm:
		return fmt.Sprintf("%s %d/%d", harm, d.Harm, d.N)
	case SafeShown:
		return fmt.Sprintf("%s %d/%d", safe, shown, d.N)
	case Undecided:
		return fmt.Sprintf("%s %d/%d (%s)", UndecidedWord, d.Harm, d.N, d.Interval())
	}
	return string(Inconclusive)
}

// Explain is the decision in a sentence: the harm's count and share with
// its interval, and for Undecided the trials that would decide it.
// harmWhat names the harm ("overran", "violated"), per the rate's unit
// ("of trials", "per failover").
func (d TrialDecision) Explain(harmWhat, per string) string {
	head := fmt.Sprintf("%s in %d of %d conclusive trial(s)", harmWhat, d.Harm, d.N)
	if iv := d.Interval(); iv != "" {
		head += fmt.Sprintf(" (%s %s at 95%%)", iv, per)
	}
	switch d.Class {
	case NoEvidence:
		return "no conclusive trial: nothing shown either way"
	case SafeShown:
		return head + fmt.Sprintf(": within the %s level", percent(d.Level))
	case Undecided:
		return head + fmt.Sprintf(": not yet within the %s level; about %d more conclusive trial(s) without it would decide",
			percent(d.Level), d.More)
	}
	return head
}

// LevelText prints a level as a percentage ("10%"), DefaultLevel's when
// unset.
func LevelText(level float64) string {
	if level <= 0 {
		level = DefaultLevel
	}
	return strconv.FormatFloat(100*level, 'g', 4, 64) + "%"
}

// ParseLevel reads a --safety-level value: a share in (0, 1), or a
// percentage such as "10%".
func ParseLevel(flag, s string) (float64, error) {
	t := strings.TrimSpace(s)
	scale := 1.0
	if strings.HasSuffix(t, "%") {
		t, scale = strings.TrimSuffix(t, "%"), 0.01
	}
	v, err := strconv.ParseFloat(t, 64)
	v *= scale
	if err != nil || !(v > 0 && v < 1) {
		return 0, fmt.Errorf("--%s %q: want a share of trials strictly between 0 and 1, such as 0.1 or 10%%", flag, s)
	}
	return v, nil
}
