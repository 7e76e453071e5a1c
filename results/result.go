// Package results holds the versioned result schema of a lockbench run, its
// store and its renderers. It knows nothing of Redis: a Result is plain data.
package results

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Schema is the version tag every result file carries.
const Schema = "lockbench/v1"

// Operation names, the keys of Result.Ops.
//
// acquire, release and renew hold the attempts that got an answer from the
// lock (acquired or contended; done, lost or taken); the ones that failed
// (network, timeout, no quorum) are in acquire_failed, release_failed and
// renew_failed, so that a fast "connection refused" never makes an
// operation look faster.
const (
	OpAcquire       = "acquire"
	OpAcquireFailed = "acquire_failed"
	OpTimeToAcquire = "time_to_acquire"
	OpRelease       = "release"
	OpReleaseFailed = "release_failed"
	OpRenew         = "renew"
	OpRenewFailed   = "renew_failed"
	OpHold          = "hold"
	OpBlocked       = "blocked"
	// OpOverrun is, for every protected write that came after its lease's
	// validity, how long after: the blind window a stalled holder works in.
	OpOverrun = "overrun"
	// OpResource is a round trip to a shared protected resource (--resource):
	// the safety check's own cost, never counted as lock latency.
	OpResource = "resource"
)

// IsFailedOp reports whether op holds only failed operations
// (acquire_failed, release_failed, renew_failed): each of them is an error.
func IsFailedOp(op string) bool {
	return op == OpAcquireFailed || op == OpReleaseFailed || op == OpRenewFailed
}

// opNames lists the operations in the order reports show them.
var opNames = []string{OpAcquire, OpAcquireFailed, OpTimeToAcquire, OpRelease, OpReleaseFailed, OpRenew, OpRenewFailed, OpHold, OpBlocked, OpOverrun, OpResource}

// opOrder returns a fresh copy of opNames, so no caller can reorder another's.
func opOrder() []string { return append([]string(nil), opNames...) }

// Histogram bounds shared by every recorder, so histograms always merge exactly:
// 1 µs to 1 hour, 3 significant digits.
const (
	HistMinUS   = 1
	HistMaxUS   = int64(time.Hour / time.Microsecond)
	HistSigFigs = 3
)

// NewHistogram returns an empty latency histogram in microseconds.
func NewHistogram() *hdr.Histogram { return hdr.New(HistMinUS, HistMaxUS, HistSigFigs) }

// Result is one run, as stored in its JSON file.
type Result struct {
	// shownName is the name a report gives the run among others (see
	// RunNames); never stored.
	shownName string

	// Schema is always "lockbench/v1".
	Schema string `json:"schema"`
	// ID names the run; its keys live under lockbench:<id>:.
	ID string `json:"id"`
	// StartedAt is when the measured window began.
	StartedAt time.Time `json:"started_at"`
	// DurationS is the measured window's wall length in seconds.
	DurationS float64 `json:"duration_s"`
	// Partial is true when the run was interrupted before its end.
	Partial bool `json:"partial"`
	// StartOffsetS is how late this generator began after the --start-at it
	// was given, in seconds (absent without --start-at).
	StartOffsetS float64 `json:"start_offset_s,omitempty"`
	// Resource names where the protected resource was kept: "in-process",
	// or a Redis URL (without its password) shared by the generators.
	Resource string `json:"resource,omitempty"`
	// Label is the user's name for the run (--label), shown in lists and
	// report legends instead of its id.
	Label string `json:"label,omitempty"`
	// Tags are the user's key=value marks (--tag), for filtering.
	Tags map[string]string `json:"tags,omitempty"`
	// Config holds every setting's value as it ran, by flag name.
	Config map[string]any `json:"config"`
	// Lock describes the lock implementation.
	Lock LockInfo `json:"lock"`
	// Topology describes the servers measured.
	Topology Topology `json:"topology"`
	// Ops summarises each operation's latency.
	Ops map[string]OpSummary `json:"ops"`
	// Throughput is per-second rates over the measured window.
	Throughput Throughput `json:"throughput"`
	// Counts are the summed event counts (contention, counters, incidents),
	// embedded so that their sections stay where they were in the JSON.
	Counts
	// Errors counts failures by kind.
	Errors map[string]int64 `json:"errors"`
	// AcquireErrors counts the failed acquire tries alone by kind (the
	// window's, as acquire_failed counts them): the breakdown that stands
	// beside the failed tries. Absent in results stored before it.
	AcquireErrors map[string]int64 `json:"acquire_errors,omitempty"`
	// Fairness is how evenly the workers shared the acquisitions.
	Fairness *Fairness `json:"fairness,omitempty"`
	// Series has one point per second of the measured window.
	Series []SeriesPoint `json:"series"`
	// NodeOutcomes are per-master outcome counts (Redlock).
	NodeOutcomes []NodeOutcome `json:"node_outcomes,omitempty"`
	// Servers is the server-side cost, where INFO was allowed.
	Servers *Servers `json:"servers,omitempty"`
	// Client is the load generator's own CPU cost over the window.
	Client *Client `json:"client,omitempty"`
	// History is the file the run's history was written to (--history),
	// "" when it kept none.
	History string `json:"history,omitempty"`
	// Faults lists the faults injected, with their actual times.
	Faults []FaultEvent `json:"faults,omitempty"`
	// MergedFrom lists the ids of the generators' results this one merges.
	MergedFrom []string `json:"merged_from,omitempty"`
	// Hosts describe the machines that generated the load, one per
	// generator: latencies measured on two cores shared with the servers
	// are not those of a dedicated client.
	Hosts []Host `json:"hosts,omitempty"`
}

// Host is the machine and build of one load generator.
type Host struct {
	// Name is the host's name as the kernel reports it.
	Name string `json:"name"`
	// CPUs is the number of logical CPUs the generator could use.
	CPUs int `json:"cpus"`
	// GOMAXPROCS is how many of them ran Go code at once.
	GOMAXPROCS int `json:"gomaxprocs"`
	// OS and Arch are the platform, as Go names it.
	OS   string `json:"os"`
	Arch string `json:"arch"`
	// GoVersion is the toolchain lockbench was built with.
	GoVersion string `json:"go_version"`
	// Build is lockbench's module version or VCS revision.
	Build string `json:"build"`
}

// LockInfo describes the lock measured.
type LockInfo struct {
	// Name is the --lock value.
	Name string `json:"name"`
	// Fencing is true when leases carried fencing tokens.
	Fencing bool `json:"fencing"`
	// Unsafe marks locks kept only to measure a hazard.
	Unsafe bool `json:"unsafe"`
	// Nodes is the number of masters the lock used.
	Nodes int `json:"nodes"`
	// Library is the Go module a peer lock drove (redsync, redislock); empty
	// for lockbench's own locks.
	Library string `json:"library,omitempty"`
	// Version is that module's version as linked into the generator, read
	// from its build information.
	Version string `json:"version,omitempty"`
	// Settings are the library settings the lock ran with, by the names
	// --peer-option takes, defaults filled in.
	Settings map[string]string `json:"settings,omitempty"`
	// LibraryDefaults are the library's own defaults for the same settings,
	// so a reader sees where the run departed from them.
	LibraryDefaults map[string]string `json:"library_defaults,omitempty"`
}

// Topology describes the servers of a run; addresses never carry passwords.
type Topology struct {
	// Kind is single, redlock or replicated.
	Kind string `json:"kind"`
	// Spec is the --topology value, e.g. redlock:5.
	Spec string `json:"spec"`
	// Provider is local, docker or external.
	Provider string `json:"provider"`
	// Nodes are host:port of each server.
	Nodes []string `json:"nodes"`
	// ServerVersion is the first node's version.
	ServerVersion string `json:"server_version"`
}

// OpSummary summarises one operation.
type OpSummary struct {
	// Count is how many were recorded. For acquire, release and renew these
	// are the operations that got an answer; failures are in OP_failed.
	Count int64 `json:"count"`
	// Errors is how many operations of this kind failed: for acquire,
	// release and renew the count of OP_failed; for OP_failed its own count
	// (every one failed); 0 for the others.
	Errors int64 `json:"errors"`
	// LatencyUS are the percentiles in microseconds.
	LatencyUS Percentiles `json:"latency_us"`
	// HDR is the histogram in HdrHistogram's compressed base64 encoding.
	HDR string `json:"hdr"`
}

// Percentiles of a latency distribution, in microseconds.
type Percentiles struct {
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"`
}

// Throughput over the measured window.
type Throughput struct {
	// AcquiredPerS is successful acquisitions per second.
	AcquiredPerS float64 `json:"acquired_per_s"`
	// AttemptsPerS is acquire attempts per second.
	AttemptsPerS float64 `json:"attempts_per_s"`
}

// Counts are a run's summed event counts: where the catalogue's counter
// figures (CounterFigures) live. The recorder of a run, its live snapshot,
// /metrics and merge all read and add them figure by figure through the
// catalogue, so a new counter is a field here and one line there.
type Counts struct {
	// Contention counts attempts and how they ended.
	Contention Contention `json:"contention"`
	// Counters are further event counts.
	Counters Counters `json:"counters"`
	// Incidents counts safety-relevant events.
	Incidents Incidents `json:"incidents"`
}

// Contention counts acquire attempts and their ends.
type Contention struct {
	// Attempts is every acquire attempt, retries included.
	Attempts int64 `json:"attempts"`
	// Acquired is attempts that took the lock.
	Acquired int64 `json:"acquired"`
	// Contended is attempts that found the key held by another.
	Contended int64 `json:"contended"`
	// GaveUp is acquisitions that ended without the lock (retries exhausted or timeout).
	GaveUp int64 `json:"gave_up"`
	// Rate is Contended / Attempts.
	Rate float64 `json:"rate"`
	// AttemptsPerAcquire is Attempts / Acquired; null with no acquisition.
	AttemptsPerAcquire *float64 `json:"attempts_per_acquire"`
}

// Counters are further event counts of a run.
type Counters struct {
	// Released is releases that found the lease ours and deleted it.
	Released int64 `json:"released"`
	// Renewed is successful renewals.
	Renewed int64 `json:"renewed"`
	// Crashed is holders that abandoned their lease without releasing.
	Crashed int64 `json:"crashed"`
	// Paused is holders that stalled inside the critical section.
	Paused int64 `json:"paused"`
	// Scheduled is open-loop requests whose intended start fell in the window.
	Scheduled int64 `json:"scheduled"`
	// Served is the scheduled requests that started before the window closed.
	Served int64 `json:"served"`
	// Dropped is the scheduled requests that never started before the window
	// closed; each is in time_to_acquire with window end − intended start, a
	// lower bound of its wait. Served + Dropped = Scheduled.
	Dropped int64 `json:"dropped"`
	// Late is served requests that started more than 1 ms after their
	// intended start; Late ≤ Served.
	Late int64 `json:"late"`
	// Unfinished is critical sections of the window that had not ended when
	// the run was interrupted or its drain timed out.
	Unfinished int64 `json:"unfinished"`
	// Writes is protected-resource writes attempted.
	Writes int64 `json:"writes"`
	// Unreplicated is acquisitions refused for too few replica acks (WAIT).
	Unreplicated int64 `json:"acquire_unreplicated"`
}

// Fairness is how evenly a run's workers shared its acquisitions: under
// contention some clients can starve while the total looks healthy.
type Fairness struct {
	// Workers is how many workers (of every generator) there were.
	Workers int `json:"workers"`
	// MinAcquired and MaxAcquired are the fewest and most acquisitions one
	// worker made in the window.
	MinAcquired int64 `json:"min_acquired"`
	MaxAcquired int64 `json:"max_acquired"`
	// Jain is Jain's fairness index over the workers' acquisitions,
	// (Σx)² / (n·Σx²): 1 when all got the same, 1/n when one got everything.
	Jain float64 `json:"jain"`
	// Starved is how many workers acquired nothing in the window.
	Starved int64 `json:"starved"`
	// WorstTimeToAcquireP99US is the time-to-acquire p99 of the worker whose
	// p99 was highest.
	WorstTimeToAcquireP99US float64 `json:"worst_time_to_acquire_p99_us"`
	// PerWorker is each worker's acquisitions, so merged runs recompute the
	// figures over every generator's workers.
	PerWorker []int64 `json:"per_worker,omitempty"`
}

// NewFairness computes the fairness figures of per-worker acquisitions and
// the worst worker's time-to-acquire p99.
func NewFairness(perWorker []int64, worstP99US float64) *Fairness {
	f := &Fairness{Workers: len(perWorker), PerWorker: perWorker, WorstTimeToAcquireP99US: worstP99US}
	if len(perWorker) == 0 {
		return f
	}
	var sum, squares float64
	f.MinAcquired, f.MaxAcquired = perWorker[0], perWorker[0]
	for _, x := range perWorker {
		f.MinAcquired, f.MaxAcquired = min(f.MinAcquired, x), max(f.MaxAcquired, x)
		if x == 0 {
			f.Starved++
		}
		sum += float64(x)
		squares += float64(x) * float64(x)
	}
	if squares > 0 {
		f.Jain = sum * sum / (float64(len(perWorker)) * squares)
	}
	return f
}

// Incidents counts the events that mean a lease did not protect its work.
type Incidents struct {
	// ExpiredDuringWork: the work ended after the lease's validity.
	ExpiredDuringWork int64 `json:"expired_during_work"`
	// ReleaseLost: release found the key gone or held by another.
	ReleaseLost int64 `json:"release_lost"`
	// RenewLost: a renewal found the lease gone.
	RenewLost int64 `json:"renew_lost"`
	// WorkAborted: work stopped because a renewal found the lease lost.
	WorkAborted int64 `json:"work_aborted"`
	// Overlaps: a holder entered while another holder of the same key was inside.
	// It is DoubleGrants + Overruns, kept for readers of older results.
	Overlaps int64 `json:"overlaps"`
	// DoubleGrants: overlaps where the lock granted the key while an earlier
	// holder inside still had a valid lease (less the clock-drift
	// allowance): the lock is broken (failover, a Redlock master restarting
	// empty, a clock jump, a naive release); a longer TTL does not help.
	DoubleGrants int64 `json:"double_grants"`
	// Overruns: overlaps where every earlier holder inside had outlived its
	// lease when the later one was granted: the holder worked past its
	// lease (pause, slow work, stalled renewal); the TTL, renewal or
	// fencing is the fix.
	Overruns int64 `json:"overruns"`
	// FencingRejected: a fenced write carried a token lower than one already written.
	FencingRejected int64 `json:"fencing_rejected"`
	// StaleWritesAccepted: an unfenced write by an expired holder after a newer holder wrote.
	StaleWritesAccepted int64 `json:"stale_writes_accepted"`
	// PossibleDoubleGrants: acquisitions that may have been granted inside
	// another token's lease, by the lock's own calls, where the order of the
	// two cannot be told from the times (an acquire or a release still in
	// flight); reported apart, not counted as double grants.
	PossibleDoubleGrants int64 `json:"possible_double_grants"`
}

// Total sums the incidents that signal unsafety or lost work.
func (i Incidents) Total() int64 {
	return i.ExpiredDuringWork + i.ReleaseLost + i.RenewLost + i.WorkAborted + i.Overlaps + i.FencingRejected + i.StaleWritesAccepted
}

// SeriesPoint is one second of a run.
type SeriesPoint struct {
	// ElapsedS is the second's end, counted from the window's start.
	ElapsedS float64 `json:"elapsed_s"`
	// Offered, in open loop, is the requests meant to start in this second
	// (the offered rate, to set against Acquired); absent in closed loop.
	Offered *int64 `json:"offered,omitempty"`
	// Acquired in this second.
	Acquired int64 `json:"acquired"`
	// Attempts in this second.
	Attempts int64 `json:"attempts"`
	// P99US is this second's acquire-attempt p99.
	P99US float64 `json:"p99_us"`
	// Errors in this second.
	Errors int64 `json:"errors"`
	// Incidents in this second.
	Incidents int64 `json:"incidents"`
	// Faults names faults that fired in this second.
	Faults []string `json:"faults,omitempty"`
	// FirstAcquiredS and LastAcquiredS are when this second's first and
	// last acquisitions happened, in seconds from the window's start
	// (absent for a second without any); see LongestGap.
	FirstAcquiredS float64 `json:"first_acquired_s,omitempty"`
	LastAcquiredS  float64 `json:"last_acquired_s,omitempty"`
}

// NodeOutcome is one master's acquire outcome counts.
type NodeOutcome struct {
	Node      string `json:"node"`
	Acquired  int64  `json:"acquired"`
	Contended int64  `json:"contended"`
	Errors    int64  `json:"errors"`
	Timeouts  int64  `json:"timeouts"`
}

// Servers is the server-side cost of a run.
type Servers struct {
	// CommandsPerAcquire sums all nodes' executed commands over
	// acquisitions; null with no acquisition. Commands a script ran count
	// one each, besides the script's own call (see ScriptCommands).
	CommandsPerAcquire *float64 `json:"commands_per_acquire"`
	// CPUUSPerAcquire sums all nodes' CPU microseconds over acquisitions;
	// null with no acquisition.
	CPUUSPerAcquire *float64 `json:"cpu_us_per_acquire"`
	// Nodes are each node's own figures.
	Nodes []ServerNode `json:"nodes"`
	// Unavailable says why some node's figures are missing (INFO refused).
	Unavailable string `json:"unavailable,omitempty"`
	// Unmeasured names the nodes left out of the sums because a fault of the
	// run took them down (a killed master cannot be asked for its INFO); the
	// figures are then the survivors'.
	Unmeasured []string `json:"unmeasured,omitempty"`
}

// Client is the generator process's own cost over the measured window: its
// CPU time (user + system, every thread; servers it started are other
// processes and not counted), read from getrusage before and after.
type Client struct {
	// CPUUS is the process's CPU time over the window, in microseconds.
	CPUUS float64 `json:"cpu_us"`
	// CPUUSPerAcquire is CPUUS over the window's acquisitions; null with
	// no acquisition.
	CPUUSPerAcquire *float64 `json:"cpu_us_per_acquire"`
	// CPUShare is CPUUS over the window's length times the CPUs the
	// generator could use (GOMAXPROCS): near 1, the generator, not the
	// servers, bounded the figures.
	CPUShare float64 `json:"cpu_share"`
	// CPUs is how many CPUs the generator's Go code could run on at once
	// (GOMAXPROCS, as --cpus set it): what CPUShare is a share of.
	CPUs int `json:"cpus,omitempty"`
	// HostCPUShare is the share of all the generator host's CPUs that were
	// busy over the window, whatever ran on them: the generator, servers it
	// started, and any other process. Near 1 with a low CPUShare, other
	// processes starved the generator. Absent where the host's CPU times
	// cannot be read (no /proc/stat).
	HostCPUShare *float64 `json:"host_cpu_share,omitempty"`
	// Unavailable says why the figures are missing (a platform without getrusage).
	Unavailable string `json:"unavailable,omitempty"`
	// Sent is what the lock's clients sent over the window; absent where
	// it was not counted (an etcd lock).
	Sent *Sent `json:"sent,omitempty"`
}

// Measured reports whether c holds a CPU reading.
func (c *Client) Measured() bool { return c != nil && c.Unavailable == "" }

// SaturatedShare is the client CPU share above which a run's figures are
// taken to be the generator's limit rather than the servers'.
const SaturatedShare = 0.85

// Saturated reports whether the generator used nearly all its CPUs.
func (c *Client) Saturated() bool { return c.Measured() && c.CPUShare > SaturatedShare }

// SetPerAcquire divides the CPU time and what was sent by the window's
// acquisitions; with none, the per-acquire figures are absent.
func (c *Client) SetPerAcquire(acquired int64) {
	c.CPUUSPerAcquire = PerAcquire(c.CPUUS, acquired)
	if c.Sent != nil {
		c.Sent.SetPerAcquire(acquired)
	}
}

// Sent is what the lock's clients sent the servers over the window, counted
// at the client (a go-redis hook on the lock's clients, and the lock's own
// count of what it writes by hand, Redlock's raw fan-out), never derived
// from what a lock is supposed to send.
type Sent struct {
	// RoundTrips is the request/reply exchanges with any server: one per
	// command, one per pipeline however many commands it carried.
	RoundTrips int64 `json:"round_trips"`
	// Commands is the commands sent in them.
	Commands int64 `json:"commands"`
	// ByCommand is Commands by command name (lower case).
	ByCommand map[string]int64 `json:"by_command,omitempty"`
	// RoundTripsPerAcquire and CommandsPerAcquire divide them by the
	// window's acquisitions; null with no acquisition.
	RoundTripsPerAcquire *float64 `json:"round_trips_per_acquire"`
	CommandsPerAcquire   *float64 `json:"commands_per_acquire"`
}

// SetPerAcquire divides s by the window's acquisitions.
func (s *Sent) SetPerAcquire(acquired int64) {
	s.RoundTripsPerAcquire = PerAcquire(float64(s.RoundTrips), acquired)
	s.CommandsPerAcquire = PerAcquire(float64(s.Commands), acquired)
}

// PerAcquire is total over acquired, or nil (absent: null in JSON, n/a in
// tables) when there was no acquisition: a cost per acquisition over none
// was not measured, and a 0 would pass for a free one.
func PerAcquire(total float64, acquired int64) *float64 {
	if acquired <= 0 {
		return nil
	}
	v := total / float64(acquired)
	return &v
}

// ErrNoAcquisitions is why a per-acquisition figure is absent: the run
// made no acquisition to divide by. Tables show such a figure as n/a.
var ErrNoAcquisitions = errors.New("the run made no acquisition, so a figure per acquisition was not measured")

// Measured reports whether s holds server figures for every node: a sum over
// only the nodes that answered INFO would pass for a measured one.
func (s *Servers) Measured() bool { return s != nil && s.Unavailable == "" }

// Scope says which nodes the sums cover: all of them, or the survivors of
// the run's faults, naming the ones left out.
func (s *Servers) Scope() string {
	if len(s.Unmeasured) == 0 {
		return "all nodes"
	}
	return "survivors only; not measured: " + strings.Join(s.Unmeasured, "; ")
}

// ServerNode is one server's cost over the window.
type ServerNode struct {
	// Addr is the server's host:port.
	Addr string `json:"addr"`
	// Commands is how many commands it ran in the window (INFO commandstats).
	Commands int64 `json:"commands"`
	// CPUUS is its CPU time over the window (INFO cpu).
	CPUUS float64 `json:"cpu_us"`
	// CommandsPerAcquire and CPUUSPerAcquire divide them by the
	// acquisitions; null with no acquisition.
	CommandsPerAcquire *float64 `json:"commands_per_acquire"`
	CPUUSPerAcquire    *float64 `json:"cpu_us_per_acquire"`
	// CPUShare is CPUUS over the window's length: near 1, the server (one
	// thread runs its commands) was the limit.
	CPUShare float64 `json:"cpu_share"`
	// ByCommand is Commands by command name.
	ByCommand map[string]int64 `json:"by_command,omitempty"`
	// Error says why the node was not measured.
	Error string `json:"error,omitempty"`
}

// SetShares sets each measured node's CPU share of a window of secs seconds.
func (s *Servers) SetShares(secs float64) {
	if s == nil || secs <= 0 {
		return
	}
	for i := range s.Nodes {
		if s.Nodes[i].Error == "" {
			s.Nodes[i].CPUShare = s.Nodes[i].CPUUS / (secs * 1e6)
		}
	}
}

// FaultEvent is one injected fault as it actually happened.
type FaultEvent struct {
	// Spec is the --fault value.
	Spec string `json:"spec"`
	// Node is the node it hit, "name (host:port)".
	Node string `json:"node,omitempty"`
	// AtS is when it fired, in seconds from the window's start (a restart:
	// when the node was killed).
	AtS float64 `json:"at_s"`
	// EndS is when it was undone, if it has an end (a restart: when the node
	// was back).
	EndS float64 `json:"end_s,omitempty"`
	// Error says why it could not be applied.
	Error string `json:"error,omitempty"`
	// Promoted names the cluster replica that became master after the
	// fault, "name (host:port)", as its own CLUSTER NODES view said.
	Promoted string `json:"promoted,omitempty"`
	// PromotedAfterS is how long after the fault was applied the replica
	// first called itself master, in seconds.
	PromotedAfterS float64 `json:"promoted_after_s,omitempty"`
	// Exposure is what the fault could break when it fired: absent when it
	// was not applied or the run could not read it.
	Exposure *FaultExposure `json:"exposure,omitempty"`
}

// HoldersAtFaults sums the holders inside when each applied fault whose
// spec match accepts fired; applies is false when r has no such fault, and
// measured is false when none of them recorded its exposure (a result of
// an older lockbench): then inside is not known, not 0.
func (r *Result) HoldersAtFaults(match func(spec string) bool) (inside int64, applies, measured bool) {
	for _, f := range r.Faults {
		if !match(f.Spec) {
			continue
		}
		applies = true
		if f.Error == "" && f.Exposure != nil {
			inside += int64(f.Exposure.Inside)
			measured = true
		}
	}
	return inside, applies, measured
}

// FaultExposure is what was at stake when a fault fired. A fault that found
// nobody inside and no valid lease could not have shown a double grant: a
// trial whose faults all did so is inconclusive, never a pass.
type FaultExposure struct {
	// Inside counts holders inside their critical sections.
	Inside int `json:"holders_inside"`
	// ValidLeases counts leases held whose validity had not run out.
	ValidLeases int `json:"valid_leases"`
	// Keys counts the distinct keys those inside held.
	Keys int `json:"keys_held"`
}

// Summarize computes an OpSummary from a histogram of microseconds.
func Summarize(h *hdr.Histogram, errors int64) (OpSummary, error) {
	enc, err := EncodeHistogram(h)
	if err != nil {
		return OpSummary{}, err
	}
	return OpSummary{Count: h.TotalCount(), Errors: errors, LatencyUS: PercentilesOf(h), HDR: enc}, nil
}

// PercentilesOf reads the standard percentiles of h. Every figure, the mean
// included, reads each value at its bucket's upper edge (at most 0.1% above
// what was recorded, at 3 significant digits), as HdrHistogram reports
// percentiles: so one sample's p50, max and mean are one number, and no
// mean exceeds the max.
func PercentilesOf(h *hdr.Histogram) Percentiles {
	if h.TotalCount() == 0 {
		return Percentiles{}
	}
	return Percentiles{
		P50:  float64(h.ValueAtQuantile(50)),
		P90:  float64(h.ValueAtQuantile(90)),
		P95:  float64(h.ValueAtQuantile(95)),
		P99:  float64(h.ValueAtQuantile(99)),
		P999: float64(h.ValueAtQuantile(99.9)),
		Max:  float64(h.Max()),
		Mean: upperEdgeMean(h),
	}
}

// upperEdgeMean is h's mean with each value at its bucket's upper edge, the
// point the percentiles read (HdrHistogram's own Mean takes bucket middles,
// so a single sample's mean came out below its p50 and max).
func upperEdgeMean(h *hdr.Histogram) float64 {
	var sum float64
	for _, b := range h.Distribution() {
		if b.Count != 0 {
			sum += float64(b.Count) * float64(b.To)
		}
	}
	return sum / float64(h.TotalCount())
}

// EncodeHistogram returns h in HdrHistogram's compressed base64 form.
func EncodeHistogram(h *hdr.Histogram) (string, error) {
	b, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		return "", fmt.Errorf("encode histogram: %w", err)
	}
	return string(b), nil
}

// DecodeHistogram parses the compressed base64 form back into a histogram.
func DecodeHistogram(s string) (*hdr.Histogram, error) {
	h, err := hdr.Decode([]byte(s))
	var notBase64 base64.CorruptInputError
	switch {
	case errors.As(err, &notBase64):
		return nil, fmt.Errorf("histogram is not base64: %w", err)
	case err != nil:
		return nil, fmt.Errorf("decode histogram: %w", err)
	}
	return h, nil
}
