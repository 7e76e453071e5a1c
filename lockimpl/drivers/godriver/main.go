// Command godriver is a lock driver in Go (the protocol of lockbench's
// --lock exec:CMD) around a lock of lockbench's own, to measure what the
// protocol costs beside the lock itself:
//
//	godriver null     grants everything, talks to no server: the protocol alone
//	godriver single   lockbench's single lock over the hello's one server
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/lockimpl"
)

func main() {
	if len(os.Args) != 2 || (os.Args[1] != "null" && os.Args[1] != "single") {
		fmt.Fprintln(os.Stderr, "usage: godriver null|single")
		os.Exit(2)
	}
	if err := lockimpl.ServeDriver(context.Background(), os.Stdin, os.Stdout, build(os.Args[1])); err != nil {
		fmt.Fprintln(os.Stderr, "godriver:", err)
		os.Exit(1)
	}
}

// build makes the named lock over the hello's servers.
func build(name string) lockimpl.DriverBuilder {
	return func(servers []string) (lockimpl.Locker, lockimpl.DriverCaps, error) {
		if name == "null" {
			return &lockimpl.NullLock{}, lockimpl.DriverCaps{Name: "null", Renews: true}, nil
		}
		if len(servers) != 1 {
			return nil, lockimpl.DriverCaps{}, fmt.Errorf("single works on one server, the hello names %d", len(servers))
		}
		opt, err := redis.ParseURL(servers[0])
		if err != nil {
			return nil, lockimpl.DriverCaps{}, fmt.Errorf("server %d: %w", 0, err)
		}
		l, err := lockimpl.New(lockimpl.LockSingle, lockimpl.Nodes(redis.NewClient(opt)), lockimpl.Options{})
		if err != nil {
			return nil, lockimpl.DriverCaps{}, err
		}
		return l, lockimpl.DriverCaps{Name: "single (Go driver)", Renews: true}, nil
	}
}
