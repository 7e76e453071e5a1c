package compose

// faults is the fault registry: one line per kind, in help order.
// Adding a fault kind is a new fault_NAME.go implementing Fault (its
// constant, form, targets, which kinds it fits and why not, apply and undo,
// what it records) and one line here; TestNoSharedFileNamesAFault fails a
// shared file that names one.
func faults() []Fault {
	return []Fault{
		killFault{},
		restartFault{},
		pauseFault{},
		latencyFault{},
		partitionFault{},
		clockJumpFault{},
		clockSpeedFault{},
		lagReplicaFault{},
		failoverFault{},
		terminateFault{},
		expireFault{},
		isolateFault{},
	}
}
