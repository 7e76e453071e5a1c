package plan

import (
	"slices"
	"testing"
)

func TestValuesArgs(t *testing.T) {
	for name, tc := range map[string]struct {
		v    Values
		want []string
	}{
		"none":                {Values{}, nil},
		"name order":          {Values{"lock": {"single"}, "duration": {"3s"}}, []string{"--duration=3s", "--lock=single"}},
		"repeated in order":   {Values{"fault": {"at=2s kill primary", "at=0s lag-replica for=2s"}}, []string{"--fault=at=2s kill primary", "--fault=at=0s lag-replica for=2s"}},
		"a bool":              {Values{"quiet": {"true"}}, []string{"--quiet=true"}},
		"a value like a flag": {Values{"label": {"-x"}}, []string{"--label=-x"}},
	} {
		t.Run(name, func(t *testing.T) {
			if got := tc.v.Args(); !slices.Equal(got, tc.want) {
				t.Errorf("Args() = %q, want %q", got, tc.want)
			}
		})
	}
}
