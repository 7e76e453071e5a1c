package workloads

import (
	"fmt"
	"strings"
	"time"
)

// ParseProbability parses a probability flag such as --pause-prob or
// --crash-prob. name is the flag's name, with or without leading dashes, so
// that the error names the flag the user typed.
func ParseProbability(name, s string) (float64, error) {
	p, err := parseFinite(s)
	if err != nil || p < 0 || p > 1 {
		return 0, fmt.Errorf("%s %q: want a probability from 0 to 1", flagName(name), s)
	}
	return p, nil
}

// RateHelp lists the accepted forms of --rate, for help text and errors.
const RateHelp = "0 for closed loop, requests per second (e.g. 500) or N/DURATION (e.g. 50/100ms)"

// ParseRate parses an open-loop request rate and returns requests per second,
// 0 meaning closed loop. N/DURATION is accepted because low or bursty rates
// read more naturally that way (1/10s), as in vegeta's -rate.
func ParseRate(name, s string) (float64, error) {
	bad := func(why string) error {
		return fmt.Errorf("%s %q: %s; want %s", flagName(name), s, why, RateHelp)
	}
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, nil
	}
	nS, perS, hasPer := strings.Cut(t, "/")
	n, err := parseFinite(nS)
	if err != nil {
		return 0, bad("not a number")
	}
	if n < 0 {
		return 0, bad("negative")
	}
	per := time.Second
	if hasPer {
		perS = strings.TrimSpace(perS)
		if perS == "s" {
			perS = "1s"
		}
		per, err = time.ParseDuration(perS)
		if err != nil || per <= 0 {
			return 0, bad("the period after / must be a positive duration")
		}
	}
	rate := n / per.Seconds()
	// Beyond a billion per second no generator keeps up, and the schedule's
	// inter-arrival time would round to zero nanoseconds.
	if rate > 1e9 {
		return 0, bad("more than 1e9 per second")
	}
	return rate, nil
}

func flagName(name string) string {
	return "--" + strings.TrimLeft(name, "-")
}
