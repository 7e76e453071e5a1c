package lockimpl

import (
	"sync/atomic"
	"time"
)

// goPool runs functions on reused goroutines. A task goes to an idle worker if
// one is waiting, otherwise to a new worker (up to max, then a plain goroutine).
// Workers leave after idling for a while, so a pool that is no longer used
// leaves nothing behind.
type goPool struct {
	tasks   chan func()
	workers atomic.Int32
	max     int32
}

const poolIdle = 10 * time.Second

func newGoPool(max int32) *goPool { return &goPool{tasks: make(chan func()), max: max} }

func (p *goPool) run(f func()) {
	select {
	case p.tasks <- f:
		return
	default:
	}
	if p.workers.Add(1) <= p.max {
		go p.worker(f)
		return
	}
	p.workers.Add(-1)
	go f()
}

func (p *goPool) worker(f func()) {
	defer p.workers.Add(-1)
	idle := time.NewTimer(poolIdle)
	defer idle.Stop()
	for {
		f()
		idle.Reset(poolIdle)
		select {
		case f = <-p.tasks:
		case <-idle.C:
			return
		}
	}
}
