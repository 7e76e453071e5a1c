package plan

import (
	"fmt"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/compose"
)

func TestTopologyGivenTwiceIsRefused(t *testing.T) {
	for _, topos := range [][]string{{"single", "single"}, {"single", "redlock:3", "redlock:3"}, {"cluster:3", "cluster:3,1"}} {
		_, err := Expand(Values{"topology": topos})
		if !IsInputError(err) || !strings.Contains(err.Error(), "--topology") || !strings.Contains(err.Error(), "given twice") {
			t.Errorf("--topology %v: %v; want an input error naming --topology given twice", topos, err)
		}
	}
	if plans, err := Expand(Values{"topology": {"single", "redlock:3"}}); err != nil || len(plans) != 2 {
		t.Errorf("two topologies: %d plans, %v", len(plans), err)
	}
}

// TestInputErrorsNameTheFlagOnce: a message that already starts with the
// flag is not prefixed with it again.
func TestInputErrorsNameTheFlagOnce(t *testing.T) {
	for _, c := range []struct {
		err  *InputError
		want string
	}{
		{&InputError{Flag: "renew-every", Msg: `--renew-every "ttl/0": N must be an integer >= 2`}, `--renew-every "ttl/0": N must be an integer >= 2`},
		{&InputError{Flag: "ttl", Msg: "want a duration"}, "--ttl: want a duration"},
		{&InputError{Flag: "ttl", Msg: "--ttls is tune-ttl's"}, "--ttl: --ttls is tune-ttl's"},
	} {
		if got := c.err.Error(); got != c.want {
			t.Errorf("Error() = %q, want %q", got, c.want)
		}
	}
	_, err := Expand(Values{"renew-every": {"ttl/0"}})
	if err == nil || strings.Count(err.Error(), "--renew-every") != 1 {
		t.Errorf("--renew-every ttl/0: %v; want the flag named once", err)
	}
}

func TestTopologyRequestErrorsAreInputErrors(t *testing.T) {
	err := fmt.Errorf("bring up redlock:3: %w", &compose.InputError{Msg: "needs 3 --redis URLs, one per master, got 1"})
	if !IsInputError(err) {
		t.Error("a topology request error is not bad input")
	}
}
