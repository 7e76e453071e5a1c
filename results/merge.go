package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Merge combines the results of several generators that ran one
// configuration against one topology at the same time into a single result,
// as if one bigger generator had run:
//
//   - each operation's HDR histograms are merged exactly and summarised again,
//     so merged percentiles are those of the union of all recorded latencies;
//   - counters, contention, incidents, errors and per-node outcomes are
//     summed, throughput is added, and derived ratios are recomputed;
//   - series points are aligned by elapsed second and their counts summed;
//     a second's p99 is the maximum of the inputs' p99 for that second, an
//     upper bound of the true p99, since per-second histograms are not kept;
//   - server figures are per node the maximum over the inputs, not the sum:
//     every generator reads the same servers' global INFO counters over the
//     same window, so summing would count each command once per generator;
//     per-acquire costs are then recomputed over the merged acquisitions;
//   - DurationS is the longest input window, StartedAt the earliest.
//
// Runs must agree on every config field except generator identity (see
// isGeneratorIdentity), on the lock and on the topology; otherwise Merge
// returns an error naming the first differing field. The merged result's ID
// is "merged-" and the run id the generators share (their ids are RUNID-gN),
// else the first input's ID; its Config that of the first input
// without "generator_id", and MergedFrom lists the inputs' IDs.
func Merge(runs []*Result) (*Result, error) {
	if len(runs) == 0 {
		return nil, errors.New("merge: no runs given")
	}
	if err := checkMergeable(runs); err != nil {
		return nil, err
	}
	out := mergeHeader(runs)
	ops, err := mergeOps(runs)
	if err != nil {
		return nil, err
	}
	out.Ops = ops
	for _, r := range runs {
		addCounts(out, r)
	}
	out.Contention = out.Contention.WithRatios()
	out.Fairness = mergeFairness(runs)
	out.NodeOutcomes = mergeNodeOutcomes(runs)
	out.Series = mergeSeries(runs)
	out.Servers = mergeServers(runs, out.Contention.Acquired)
	out.Client = mergeClient(runs, out.Contention.Acquired)
	out.Servers.SetShares(out.DurationS)
	out.Faults = mergeFaults(runs)
	return out, nil
}

// checkMergeable refuses runs that did not measure the same thing at once.
func checkMergeable(runs []*Result) error {
	a := runs[0]
	seenID := map[string]bool{}
	seenGen := map[string]string{}
	for _, b := range runs {
		if seenID[b.ID] {
			return fmt.Errorf("merge: run %s given twice", b.ID)
		}
		seenID[b.ID] = true
		if g, ok := generatorID(b); ok {
			if other, dup := seenGen[g]; dup {
				return fmt.Errorf("merge: runs %s and %s have the same generator_id %s; each generator must have its own", other, b.ID, g)
			}
			seenGen[g] = b.ID
		}
		if b.Schema != a.Schema {
			return diffErr("schema", a, b, a.Schema, b.Schema)
		}
		if err := sameSetup(a, b); err != nil {
			return err
		}
		if err := sameConfig(a, b); err != nil {
			return err
		}
	}
	return nil
}

func generatorID(r *Result) (string, bool) {
	for k, v := range r.Config {
		if normField(k) == "generator_id" {
			return jsonText(v), true
		}
	}
	return "", false
}

// sameSetup compares what was measured outside Config: the lock and the
// servers. Node lists are compared as written; generators given the same
// topology flag list the same nodes.
func sameSetup(a, b *Result) error {
	pairs := []struct {
		field string
		x, y  any
	}{
		{"lock.name", a.Lock.Name, b.Lock.Name},
		{"lock.fencing", a.Lock.Fencing, b.Lock.Fencing},
		{"lock.unsafe", a.Lock.Unsafe, b.Lock.Unsafe},
		{"lock.nodes", a.Lock.Nodes, b.Lock.Nodes},
		{"lock.library", a.Lock.Library, b.Lock.Library},
		{"lock.version", a.Lock.Version, b.Lock.Version},
		{"lock.settings", a.Lock.Settings, b.Lock.Settings},
		{"topology.kind", a.Topology.Kind, b.Topology.Kind},
		{"topology.spec", a.Topology.Spec, b.Topology.Spec},
		{"topology.nodes", strings.Join(a.Topology.Nodes, ","), strings.Join(b.Topology.Nodes, ",")},
	}
	for _, p := range pairs {
		if jsonText(p.x) != jsonText(p.y) {
			return diffErr(p.field, a, b, p.x, p.y)
		}
	}
	return nil
}

// sameConfig compares every config field but generator identity. Values are
// compared as JSON, so 16 read from a file equals 16 still held as an int.
func sameConfig(a, b *Result) error {
	keys := map[string]bool{}
	for k := range a.Config {
		keys[k] = true
	}
	for k := range b.Config {
		keys[k] = true
	}
	for _, k := range sortedKeys(keys) {
		if isGeneratorIdentity(k) {
			continue
		}
		va, oka := a.Config[k]
		vb, okb := b.Config[k]
		if oka != okb || jsonText(va) != jsonText(vb) {
			return diffErr(k, a, b, unsetOr(va, oka), unsetOr(vb, okb))
		}
	}
	return nil
}

func unsetOr(v any, ok bool) any {
	if !ok {
		return "<unset>"
	}
	return v
}

func diffErr(field string, a, b *Result, va, vb any) error {
	return fmt.Errorf("merge: runs differ in config field %q (%s: %s, %s: %s)", field, a.ID, jsonText(va), b.ID, jsonText(vb))
}

// jsonText renders a config value as it appears in the result file.
func jsonText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// sharedRunID is the run id the generators of one run share (their ids are
// RUNID-gN), so that the merged result is named by the run rather than by
// its first generator; the first input's id when they share none.
func sharedRunID(runs []*Result) string {
	base, _, ok := cutGenerator(runs[0].ID)
	if !ok {
		return runs[0].ID
	}
	for _, r := range runs[1:] {
		if b, _, ok := cutGenerator(r.ID); !ok || b != base {
			return runs[0].ID
		}
	}
	return base
}

// cutGenerator splits a generator's id RUNID-gN into RUNID and N.
func cutGenerator(id string) (runID string, n int, ok bool) {
	i := strings.LastIndex(id, "-g")
	if i <= 0 {
		return "", 0, false
	}
	n, err := strconv.Atoi(id[i+2:])
	if err != nil || n < 0 {
		return "", 0, false
	}
	return id[:i], n, true
}

// mergeHeader builds the merged result's identity and window.
func mergeHeader(runs []*Result) *Result {
	first := runs[0]
	out := &Result{
		Schema:   Schema,
		ID:       "merged-" + sharedRunID(runs),
		Config:   map[string]any{},
		Label:    first.Label,
		Tags:     first.Tags,
		Lock:     first.Lock,
		Topology: first.Topology,
		Errors:   map[string]int64{},
	}
	for k, v := range first.Config {
		if normField(k) != "generator_id" {
			out.Config[k] = v
		}
	}
	for _, r := range runs {
		out.MergedFrom = append(out.MergedFrom, r.ID)
		out.Hosts = append(out.Hosts, r.Hosts...)
		if out.StartedAt.IsZero() || (!r.StartedAt.IsZero() && r.StartedAt.Before(out.StartedAt)) {
			out.StartedAt = r.StartedAt
		}
		out.DurationS = math.Max(out.DurationS, r.DurationS)
		out.Partial = out.Partial || r.Partial
	}
	return out
}

// mergeOps merges each operation's histograms. An operation with a count
// but no decodable histogram cannot be merged exactly, so it is an error
// naming the run and operation rather than a silently wrong percentile.
func mergeOps(runs []*Result) (map[string]OpSummary, error) {
	ops := map[string]OpSummary{}
	for _, op := range opsPresent(runs) {
		h := NewHistogram()
		var errs int64
		for _, r := range runs {
			s, ok := r.Ops[op]
			if !ok || (s.Count == 0 && s.HDR == "") {
				continue
			}
			in, err := DecodeHistogram(s.HDR)
			if err != nil {
				return nil, fmt.Errorf("merge: run %s op %s: %w", r.ID, op, err)
			}
			if dropped := h.Merge(in); dropped > 0 {
				return nil, fmt.Errorf("merge: run %s op %s: %d values outside %d..%d µs", r.ID, op, dropped, HistMinUS, HistMaxUS)
			}
			errs += s.Errors
		}
		sum, err := Summarize(h, errs)
		if err != nil {
			return nil, fmt.Errorf("merge: op %s: %w", op, err)
		}
		ops[op] = sum
	}
	return ops, nil
}

// addCounts adds r's summed figures into out: every figure of the catalogue
// that merges by sum and has a count or a total to add to, and the error
// kinds.
func addCounts(out, r *Result) {
	for _, f := range Catalogue() {
		if f.Merge != MergeSum {
			continue
		}
		switch {
		case f.counter != nil:
			*f.counter(&out.Counts) += *f.counter(&r.Counts)
		case f.total != nil:
			*f.total(out) += *f.total(r)
		}
	}
	for k, v := range r.Errors {
		out.Errors[k] += v
	}
	for k, v := range r.AcquireErrors {
		if out.AcquireErrors == nil {
			out.AcquireErrors = map[string]int64{}
		}
		out.AcquireErrors[k] += v
	}
}

// mergeFairness recomputes fairness over every generator's workers; the
// worst worker of all is the worst of some generator's. Without every
// generator's per-worker counts it is left out rather than guessed.
func mergeFairness(runs []*Result) *Fairness {
	var workers []int64
	worst := 0.0
	for _, r := range runs {
		if r.Fairness == nil || len(r.Fairness.PerWorker) == 0 {
			return nil
		}
		workers = append(workers, r.Fairness.PerWorker...)
		worst = max(worst, r.Fairness.WorstTimeToAcquireP99US)
	}
	return NewFairness(workers, worst)
}

// WithRatios returns c with the ratios that cannot be summed recomputed
// from its counts; attempts per acquisition over no acquisitions is absent.
func (c Contention) WithRatios() Contention {
	c.Rate = 0
	if c.Attempts > 0 {
		c.Rate = float64(c.Contended) / float64(c.Attempts)
	}
	c.AttemptsPerAcquire = PerAcquire(float64(c.Attempts), c.Acquired)
	return c
}

func mergeNodeOutcomes(runs []*Result) []NodeOutcome {
	var out []NodeOutcome
	index := map[string]int{}
	for _, r := range runs {
		for _, n := range r.NodeOutcomes {
			i, ok := index[n.Node]
			if !ok {
				i = len(out)
				index[n.Node] = i
				out = append(out, NodeOutcome{Node: n.Node})
			}
			o := &out[i]
			o.Acquired += n.Acquired
			o.Contended += n.Contended
			o.Errors += n.Errors
			o.Timeouts += n.Timeouts
		}
	}
	return out
}

// mergeSeries aligns points by their elapsed second (rounded, since each
// generator's ticker drifts a little from the shared start).
func mergeSeries(runs []*Result) []SeriesPoint {
	bySec := map[int64]*SeriesPoint{}
	for _, r := range runs {
		for _, p := range r.Series {
			sec := int64(math.Round(p.ElapsedS))
			m, ok := bySec[sec]
			if !ok {
				m = &SeriesPoint{ElapsedS: float64(sec)}
				bySec[sec] = m
			}
			m.Acquired += p.Acquired
			m.Attempts += p.Attempts
			if p.Offered != nil {
				m.Offered = addOffered(m.Offered, *p.Offered)
			}
			m.Errors += p.Errors
			m.Incidents += p.Incidents
			m.P99US = math.Max(m.P99US, p.P99US)
			m.Faults = appendMissing(m.Faults, p.Faults...)
			m.MergeAcquisitionTimes(p)
		}
	}
	secs := make([]int64, 0, len(bySec))
	for s := range bySec {
		secs = append(secs, s)
	}
	sort.Slice(secs, func(i, j int) bool { return secs[i] < secs[j] })
	out := make([]SeriesPoint, 0, len(secs))
	for _, s := range secs {
		out = append(out, *bySec[s])
	}
	return out
}

// addOffered adds n to a merged second's offered requests, absent until a
// generator recorded some.
func addOffered(sum *int64, n int64) *int64 {
	total := n
	if sum != nil {
		total += *sum
	}
	return &total
}

func appendMissing(list []string, items ...string) []string {
	for _, it := range items {
		found := false
		for _, have := range list {
			found = found || have == it
		}
		if !found {
			list = append(list, it)
		}
	}
	return list
}

// mergeServers keeps per node the largest figures any generator read (see
// Merge for why not the sum) and recomputes per-acquire cost over acquired.
func mergeServers(runs []*Result, acquired int64) *Servers {
	var out *Servers
	index := map[string]int{}
	for _, r := range runs {
		if r.Servers == nil {
			continue
		}
		if out == nil {
			out = &Servers{}
		}
		if out.Unavailable == "" {
			out.Unavailable = r.Servers.Unavailable
		}
		for _, u := range r.Servers.Unmeasured {
			if !slices.Contains(out.Unmeasured, u) {
				out.Unmeasured = append(out.Unmeasured, u)
			}
		}
		for _, n := range r.Servers.Nodes {
			i, ok := index[n.Addr]
			if !ok {
				i = len(out.Nodes)
				index[n.Addr] = i
				out.Nodes = append(out.Nodes, ServerNode{Addr: n.Addr})
			}
			maxNode(&out.Nodes[i], n)
		}
	}
	if out == nil {
		return nil
	}
	out.SetPerAcquire(acquired)
	return out
}

// mergeClient sums the generators' CPU time: each is its own process, so
// unlike a server's counters nothing is read twice. A generator without a
// reading makes the merged figure missing, not smaller.
func mergeClient(runs []*Result, acquired int64) *Client {
	out := &Client{}
	var hostShare *float64
	for _, r := range runs {
		switch {
		case r.Client == nil:
			return nil
		case r.Client.Unavailable != "" && out.Unavailable == "":
			out.Unavailable = r.Client.Unavailable
		}
		out.CPUUS += r.Client.CPUUS
		out.Sent = addSent(out.Sent, r.Client.Sent, r == runs[0])
		// Each generator is its own process on its own CPUs: the merged run
		// was bounded by a generator if any of them was.
		out.CPUShare = max(out.CPUShare, r.Client.CPUShare)
		out.CPUs = max(out.CPUs, r.Client.CPUs)
		// Likewise the busiest host; one generator without a reading makes
		// it missing, not smaller.
		hostShare = maxShare(hostShare, r.Client.HostCPUShare, r == runs[0])
	}
	out.HostCPUShare = hostShare
	out.SetPerAcquire(acquired)
	return out
}

// maxShare is the larger of two shares, nil when the run's is missing or
// an earlier run's was (first says share is the first run's).
func maxShare(into, share *float64, first bool) *float64 {
	if share == nil || (into == nil && !first) {
		return nil
	}
	v := *share
	if into != nil {
		v = max(v, *into)
	}
	return &v
}

// addSent sums what the generators' locks sent: each sent its own. One
// generator without a count makes the merged count missing, not smaller.
func addSent(into, s *Sent, first bool) *Sent {
	if s == nil || (into == nil && !first) {
		return nil
	}
	if into == nil {
		into = &Sent{}
	}
	into.RoundTrips += s.RoundTrips
	into.Commands += s.Commands
	for name, n := range s.ByCommand {
		if into.ByCommand == nil {
			into.ByCommand = map[string]int64{}
		}
		into.ByCommand[name] += n
	}
	return into
}

func maxNode(into *ServerNode, n ServerNode) {
	into.Commands = max(into.Commands, n.Commands)
	into.CPUUS = math.Max(into.CPUUS, n.CPUUS)
	if into.Error == "" {
		into.Error = n.Error
	}
	for cmd, c := range n.ByCommand {
		if into.ByCommand == nil {
			into.ByCommand = map[string]int64{}
		}
		into.ByCommand[cmd] = max(into.ByCommand[cmd], c)
	}
}

// SetPerAcquire divides each node's commands and CPU, and their sums, by the
// acquisitions of the window; with none, the per-acquire figures are absent.
func (s *Servers) SetPerAcquire(acquired int64) {
	var cmds int64
	var cpu float64
	for i := range s.Nodes {
		n := &s.Nodes[i]
		cmds += n.Commands
		cpu += n.CPUUS
		n.CommandsPerAcquire = PerAcquire(float64(n.Commands), acquired)
		n.CPUUSPerAcquire = PerAcquire(n.CPUUS, acquired)
	}
	s.CommandsPerAcquire = PerAcquire(float64(cmds), acquired)
	s.CPUUSPerAcquire = PerAcquire(cpu, acquired)
}

// mergeFaults keeps each distinct fault once: usually one generator injects
// faults, but if several report the same one it happened once.
func mergeFaults(runs []*Result) []FaultEvent {
	var out []FaultEvent
	seen := map[FaultEvent]bool{}
	for _, r := range runs {
		for _, f := range r.Faults {
			if !seen[f] {
				seen[f] = true
				out = append(out, f)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].AtS < out[j].AtS })
	return out
}
