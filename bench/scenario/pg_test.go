package scenario

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/longtest"
)

// TestPgSessionLoss runs pg-session-loss once: terminated sessions make
// the advisory locks' holders overlap with the next; the transaction-level
// lock never lets a holder whose session died write, and the lease lock
// never overlaps; nothing of the servers is left.
func TestPgSessionLoss(t *testing.T) {
	longtest.Waiting(t)
	s, err := Lookup("pg-session-loss")
	if err != nil {
		t.Fatal(err)
	}
	v, err := Run(context.Background(), s, Options{Trials: 1}, execute)
	if err != nil {
		t.Fatal(err)
	}
	if left := compose.PgLeftovers(os.Getpid()); len(left) > 0 {
		t.Fatalf("postgres left behind: %v", left)
	}
	var sb strings.Builder
	_ = WriteVerdict(&sb, v)
	t.Log("\n" + sb.String())
	checkConclusive(t, v)
	for _, vv := range v.Variants {
		lock := vv.Trials[0].Result.Lock.Name
		overlaps := vv.DoubleGrants + vv.Overruns
		switch {
		case lock != "pg-lease" && overlaps == 0:
			t.Errorf("%s: no overlap though holders' sessions were terminated", vv.Variant.Name)
		case lock == "pg-advisory-xact" && vv.StaleAccepted != 0:
			t.Errorf("%s: %d stale writes accepted from dead transactions", vv.Variant.Name, vv.StaleAccepted)
		case lock == "pg-lease" && (overlaps != 0 || vv.StaleAccepted != 0):
			t.Errorf("%s: %d overlaps, %d stale writes; a lease outlives its session", vv.Variant.Name, overlaps, vv.StaleAccepted)
		}
	}
}
