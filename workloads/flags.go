package workloads

import (
	"fmt"
	"strings"
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

func flagName(name string) string {
	return "--" + strings.TrimLeft(name, "-")
}
