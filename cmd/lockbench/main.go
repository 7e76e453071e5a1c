// Command lockbench benchmarks and load-tests distributed locks on Redis,
// etcd, PostgreSQL, ZooKeeper and NATS.
// It is a thin call of bench/cli.Run, which a Go program bringing a lock of
// its own calls the same way, with its locks in cli.Options.
package main

import (
	"os"

	"github.com/lockbench/lockbench/bench/cli"
)

// version is set at build time with -ldflags "-X main.version=…" (make
// build does); a plain go build leaves it empty.
var version string

func main() {
	os.Exit(cli.Run(os.Args, cli.Options{Version: version}))
}
