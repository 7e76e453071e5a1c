package failovermap

import (
	"os"
	"testing"

	"github.com/lockbench/lockbench/compose/composetest"
)

// TestMain holds go-redis's log lines back (printed if the package fails)
// and fails the package if a test left a server behind.
func TestMain(m *testing.M) { os.Exit(composetest.Main(m)) }
