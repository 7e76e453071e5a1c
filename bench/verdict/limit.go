package verdict

import (
	"fmt"
	"net"
	"strings"

	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

// What bounded a run: the keys' hold (contention), or the CPU that ran out
// (for a capacity search, at the step that reached the most acquisitions/s
// under the SLO).
const (
	// LimitContention: the keys were held (nearly) all the time: the hold
	// on the keys in use, not any machine, bounded the acquisitions.
	LimitContention = "contention"
	// LimitServer: the busiest server's thread was (nearly) always busy.
	LimitServer = "server"
	// LimitGenerator: the generator used (nearly) all its CPUs.
	LimitGenerator = "generator"
	// LimitHost: neither alone, but the generator's host was (nearly)
	// all busy: with the servers it shares, or with other processes.
	LimitHost = "host"
	// LimitNone: no CPU ran out; latency (batching, the network, the
	// lock's round trips) or the SLO bounded the figures.
	LimitNone = "none"
	// LimitUnmeasured: the CPU figures needed were absent.
	LimitUnmeasured = "unmeasured"
)

// CPUUse is what a step's run used of its CPUs, as a verdict reads it.
type CPUUse struct {
	// ClientShare is client.cpu_share: the generator's CPU time over the
	// window times its CPUs (GOMAXPROCS); nil when not measured.
	ClientShare *float64 `json:"client_cpu_share,omitempty"`
	// ClientCPUs is how many CPUs ClientShare is a share of.
	ClientCPUs int `json:"client_cpus,omitempty"`
	// HeldBack is true when --cpus gave the generator fewer CPUs than the
	// host has: it ran out of those, not of the host's.
	HeldBack bool `json:"held_back,omitempty"`
	// ServerShares are each server's cpu_share (its CPU time over the
	// window: near 1, its one command thread was always busy); nil when the
	// servers were not measured.
	ServerShares []float64 `json:"server_cpu_shares,omitempty"`
	// SharedHost is true when the servers ran on the generator's host
	// (local processes or containers, or loopback addresses), whose
	// HostCPUs they then compete for.
	SharedHost bool `json:"shared_host,omitempty"`
	HostCPUs   int  `json:"host_cpus,omitempty"`
	// HostShare is the share of the generator host's CPUs busy over the
	// window, every process on it counted (others' too); nil when not read.
	HostShare *float64 `json:"host_cpu_share,omitempty"`
}

// Limit says which resource bounded a run (or a capacity search), and why.
type Limit struct {
	// Limit is one of the Limit* names.
	Limit string `json:"limit"`
	// Why gives the figures the verdict rests on.
	Why string `json:"why"`
}

// Busiest is the highest server CPU share, or -1 with no server measured.
func (u CPUUse) Busiest() float64 {
	b := -1.0
	for _, s := range u.ServerShares {
		b = max(b, s)
	}
	return b
}

// JudgeCPU says what bounded a step that used u: the server when its busiest
// node's thread was busy over results.SaturatedShare of the window (that
// is the limit a capacity search looks for, whatever else ran out too),
// else the generator past the same share of its CPUs, else the host when
// it was busy past that share (other processes included; without that
// reading, when the generator and servers share it and together used that
// share of its CPUs), else none.
func JudgeCPU(u CPUUse) Limit {
	server := u.Busiest()
	shares := fmt.Sprintf("busiest server %s of one CPU, generator %s of %s", pct(server), pctPtr(u.ClientShare), cpus(u.ClientCPUs))
	if u.HeldBack {
		shares += fmt.Sprintf(" (held back to %s by --cpus)", cpus(u.ClientCPUs))
	}
	if u.HostShare != nil {
		shares += fmt.Sprintf(", host %s busy", pct(*u.HostShare))
	}
	switch {
	case server > results.SaturatedShare:
		return Limit{Limit: LimitServer, Why: shares}
	case u.ClientShare != nil && *u.ClientShare > results.SaturatedShare:
		return Limit{Limit: LimitGenerator, Why: shares}
	case u.HostShare != nil && *u.HostShare > results.SaturatedShare:
		return Limit{Limit: LimitHost, Why: shares}
	case u.ClientShare == nil || server < 0:
		return Limit{Limit: LimitUnmeasured, Why: shares}
	}
	if u.SharedHost && u.HostCPUs > 0 {
		used := *u.ClientShare*float64(u.ClientCPUs) + sum(u.ServerShares)
		if used > results.SaturatedShare*float64(u.HostCPUs) {
			return Limit{Limit: LimitHost, Why: fmt.Sprintf("%s; together %.2f of the host's %s", shares, used, cpus(u.HostCPUs))}
		}
	}
	return Limit{Limit: LimitNone, Why: shares}
}

// Text is the verdict as the capacity table prints it.
func (v Limit) Text() string {
	switch v.Limit {
	case LimitContention:
		return "limit: contention on the keys (" + v.Why + "); shard the keys or shorten the hold"
	case LimitServer:
		return "limit: the server (" + v.Why + "); the keys spread over more servers or clusters would reach further"
	case LimitGenerator:
		return "limit: the generator (" + v.Why + "); more generators, or --pipeline auto where the lock takes it, would reach further"
	case LimitHost:
		return "limit: the generator's host was busy (" + v.Why + "); measure on a quieter host or run the generator on another"
	case LimitNone:
		return "limit: no CPU ran out (" + v.Why + "); latency or the SLO bounded the throughput"
	}
	return "limit: unknown, CPU not measured (" + v.Why + ")"
}

// ContentionShare is the share of the keys in use that must be held on
// average (acquisitions/s × mean hold over the keys) for a run whose tries
// found keys held to count as contention-bound.
const ContentionShare = 0.8

// LimitOf names what bounded one run, by one rule: contention first (most
// tries found their key held, a split vote counted as held, or the keys in
// use were held ContentionShare of the time while tries found them held:
// no CPU would buy more acquisitions), then the CPU rule of JudgeCPU.
func LimitOf(r *results.Result) Limit {
	if l, ok := contentionLimit(r); ok {
		return l
	}
	return JudgeCPU(CPUUseOf(r))
}

// contentionLimit is LimitContention with its figures, when a run was
// contention-bound. It reads what was measured, not how many keys there
// were against workers: a hot key among a thousand is contention as much
// as one key among many workers.
func contentionLimit(r *results.Result) (Limit, bool) {
	c := r.Contention
	split := r.AcquireErrors["split_vote"]
	held := c.Contended + split
	if c.Attempts == 0 || held == 0 {
		return Limit{}, false
	}
	occupancy, keys, known := keyOccupancy(r)
	if 2*held <= c.Attempts && (!known || occupancy < ContentionShare) {
		return Limit{}, false
	}
	why := fmt.Sprintf("%s of %s tries found the key held", thousands(c.Contended), thousands(c.Attempts))
	if split > 0 {
		why += fmt.Sprintf(", %s more lost a split vote (masters held by others)", thousands(split))
	}
	if known {
		why += fmt.Sprintf("; %.1f acquisitions/s × mean hold %s kept %.0f%% of %s held on average",
			r.Throughput.AcquiredPerS, results.FormatUS(r.Ops[results.OpHold].LatencyUS.Mean), 100*occupancy, results.Count(int64(keys), "key"))
	}
	return Limit{Limit: LimitContention, Why: why}, true
}

// keyOccupancy is the measured share of time the keys in use were held
// (acquisitions/s × mean hold over the keys), with their number; false
// for unique keys or a configuration that does not say.
func keyOccupancy(r *results.Result) (occupancy float64, keys int, ok bool) {
	chooser, err := workloads.ParseKeys(fmt.Sprint(r.Config["keys"]))
	if err != nil {
		return 0, 0, false
	}
	keys, shared := workloads.KeysInUse(chooser)
	if !shared || keys == 0 {
		return 0, 0, false
	}
	hold := r.Ops[results.OpHold].LatencyUS.Mean / 1e6
	return r.Throughput.AcquiredPerS * hold / float64(keys), keys, true
}

// CPUUseOf reads a run's CPU figures: client.cpu_share from the catalogue,
// each measured server's cpu_share, and whether the servers share the
// generator's host.
func CPUUseOf(r *results.Result) CPUUse {
	var u CPUUse
	if f, err := results.LookupFigure("client.cpu_share"); err == nil {
		if v, err := f.Value(r); err == nil {
			u.ClientShare = &v
		}
	}
	if len(r.Hosts) > 0 {
		u.ClientCPUs, u.HostCPUs = r.Hosts[0].GOMAXPROCS, r.Hosts[0].CPUs
	}
	if r.Client != nil && r.Client.CPUs > 0 {
		// The window's own reading: the GOMAXPROCS its share was taken of.
		u.ClientCPUs = r.Client.CPUs
	}
	if set := fmt.Sprint(r.Config["cpus"]); set != "" && set != "0" && set != "<nil>" && u.ClientCPUs < u.HostCPUs {
		u.HeldBack = true
	}
	if r.Servers.Measured() {
		for _, n := range r.Servers.Nodes {
			if n.Error == "" {
				u.ServerShares = append(u.ServerShares, n.CPUShare)
			}
		}
	}
	u.SharedHost = sharesHost(r.Topology)
	if r.Client != nil {
		u.HostShare = r.Client.HostCPUShare
	}
	return u
}

// sharesHost reports whether a topology's servers ran on the generator's
// host: started by it (local processes, containers) or at loopback addresses.
func sharesHost(t results.Topology) bool {
	if t.Provider != "external" && t.Provider != "" {
		return true
	}
	if len(t.Nodes) == 0 {
		return false
	}
	for _, addr := range t.Nodes {
		host, _, err := net.SplitHostPort(addr)
		if ip := net.ParseIP(host); err != nil || (host != "localhost" && (ip == nil || !ip.IsLoopback())) {
			return false
		}
	}
	return true
}

func sum(xs []float64) float64 {
	t := 0.0
	for _, x := range xs {
		t += x
	}
	return t
}

func pct(v float64) string {
	if v < 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.0f%%", 100*v)
}

func pctPtr(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return pct(*v)
}

func cpus(n int) string {
	switch {
	case n <= 0:
		return "its CPUs"
	case n == 1:
		return "1 CPU"
	}
	return fmt.Sprintf("%d CPUs", n)
}

// Cell is the CPU use as a table cell: the generator's share of its CPUs
// over the busiest server's of one CPU, in percent, n/a where not measured.
func (u CPUUse) Cell() string {
	return strings.TrimSuffix(pctPtr(u.ClientShare), "%") + "/" + strings.TrimSuffix(pct(u.Busiest()), "%")
}
