package compose_test

import (
	"os"
	"testing"

	"github.com/lockbench/lockbench/compose/composetest"
)

// TestMain fails the package if a test left a PostgreSQL process or data
// directory behind.
func TestMain(m *testing.M) { os.Exit(composetest.MainNoPgLeftovers(m)) }
