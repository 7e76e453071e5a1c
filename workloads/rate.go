package workloads

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// RateHelp lists the accepted forms of --rate, for help text and errors.
const RateHelp = "0 for closed loop, requests per second (e.g. 500), N/DURATION (e.g. 50/100ms), " +
	"or stages START,TARGET:DURATION[,TARGET:DURATION...] (e.g. 100,2000:30s,2000:1m)"

// MaxRate is the highest request rate accepted: beyond a billion per second
// no generator keeps up, and the schedule's inter-arrival time would round
// to zero nanoseconds.
const MaxRate = 1e9

// MaxStagedWindow bounds the stages' total: longer than a week is a typo,
// and far longer would overflow the schedule's nanoseconds.
const MaxStagedWindow = 7 * 24 * time.Hour

// RateStage is one stage of a staged rate: over Duration the rate moves
// linearly from the previous stage's target (or the start rate) to Target.
type RateStage struct {
	// Target is the rate, per second, at the stage's end.
	Target float64
	// Duration is how long the stage lasts.
	Duration time.Duration
}

// Rate is an open-loop arrival rate: constant (Start, no stages), or a start
// rate followed by stages, in the manner of k6's ramping-arrival-rate. The
// zero Rate is closed loop.
type Rate struct {
	// Start is the constant rate, or the staged rate's starting point (the
	// warm-up runs at it), in requests per second.
	Start float64
	// Stages are the ramps after the start; none for a constant rate.
	Stages []RateStage
}

// ConstantRate is a rate of r requests per second (0: closed loop).
func ConstantRate(r float64) Rate { return Rate{Start: r} }

// Open reports whether the rate paces requests (open loop).
func (r Rate) Open() bool { return r.Start > 0 || r.Staged() }

// Staged reports whether the rate has stages.
func (r Rate) Staged() bool { return len(r.Stages) > 0 }

// Window is the stages' total duration, which is the measured window of a
// staged run; 0 for a constant rate.
func (r Rate) Window() time.Duration {
	var sum time.Duration
	for _, s := range r.Stages {
		sum += s.Duration
	}
	return sum
}

// String writes the rate in the form ParseRate reads.
func (r Rate) String() string {
	parts := []string{formatFloat(r.Start)}
	for _, s := range r.Stages {
		parts = append(parts, formatFloat(s.Target)+":"+s.Duration.String())
	}
	return strings.Join(parts, ",")
}

// ParseRate parses --rate: a constant rate in requests per second (0 or ""
// for closed loop), or stages START,TARGET:DURATION[,TARGET:DURATION...].
// N/DURATION is accepted wherever a rate is, because low or bursty rates
// read more naturally that way (1/10s), as in vegeta's -rate. name is the
// flag's name, so that the one-line error names the flag the user typed.
func ParseRate(name, s string) (Rate, error) {
	r, err := parseRate(s)
	if err != nil {
		// RateHelp is too long for one line after the reason; an example of each form is not.
		return Rate{}, fmt.Errorf("%s %q: %v; want e.g. 500, 50/100ms or 100,2000:30s", flagName(name), s, err)
	}
	return r, nil
}

func parseRate(s string) (Rate, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return Rate{}, nil
	}
	pieces := strings.Split(t, ",")
	start, err := parseOneRate(pieces[0])
	if err != nil {
		if len(pieces) > 1 {
			return Rate{}, fmt.Errorf("start rate: %w", err)
		}
		return Rate{}, err
	}
	r := Rate{Start: start}
	for i, piece := range pieces[1:] {
		st, err := parseStage(piece)
		if err != nil {
			return Rate{}, fmt.Errorf("stage %d %q: %w", i+1, strings.TrimSpace(piece), err)
		}
		r.Stages = append(r.Stages, st)
		if r.Window() > MaxStagedWindow {
			return Rate{}, fmt.Errorf("the stages last more than %v", MaxStagedWindow)
		}
	}
	if r.Staged() && r.Start == 0 && !anyTarget(r.Stages) {
		return Rate{}, errors.New("every rate is 0 (closed loop is 0 alone)")
	}
	return r, nil
}

func anyTarget(stages []RateStage) bool {
	for _, s := range stages {
		if s.Target > 0 {
			return true
		}
	}
	return false
}

// parseStage reads TARGET:DURATION.
func parseStage(piece string) (RateStage, error) {
	i := strings.LastIndex(piece, ":")
	if i < 0 {
		return RateStage{}, errors.New("a stage is TARGET:DURATION")
	}
	target, err := parseOneRate(piece[:i])
	if err != nil {
		return RateStage{}, fmt.Errorf("target: %w", err)
	}
	d, err := time.ParseDuration(strings.TrimSpace(piece[i+1:]))
	if err != nil || d <= 0 {
		return RateStage{}, errors.New("the duration after : must be a positive duration such as 30s")
	}
	return RateStage{Target: target, Duration: d}, nil
}

// parseOneRate reads N or N/DURATION as requests per second.
func parseOneRate(s string) (float64, error) {
	nS, perS, hasPer := strings.Cut(strings.TrimSpace(s), "/")
	n, err := parseFinite(nS)
	if err != nil {
		return 0, errors.New("not a number")
	}
	if n < 0 {
		return 0, errors.New("negative")
	}
	per := time.Second
	if hasPer {
		perS = strings.TrimSpace(perS)
		if perS == "s" {
			perS = "1s"
		}
		per, err = time.ParseDuration(perS)
		if err != nil || per <= 0 {
			return 0, errors.New("the period after / must be a positive duration")
		}
	}
	rate := n / per.Seconds()
	if rate > MaxRate {
		return 0, errors.New("more than 1e9 per second")
	}
	return rate, nil
}
