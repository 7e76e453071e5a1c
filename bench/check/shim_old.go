package check

import (
	"time"

	"github.com/lockbench/lockbench/bench/history"
)

func (k *KeyReport) nViolations() int { return len(k.Violations) }

func timeNS(ns int64) time.Duration { return time.Duration(ns) }

func CheckFiles(paths []string, opts Options) (*Report, error) {
	h, err := history.ReadFiles(paths)
	if err != nil {
		return nil, err
	}
	return Check(h, opts)
}
