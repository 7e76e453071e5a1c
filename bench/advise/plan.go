package advise

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/bench/sweep"
	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

// Kind is what an experiment asks.
type Kind string

// The kinds of experiment, in the order they run.
const (
	// KindTTL is one TTL × renewal cell of the tuning, on the first candidate.
	KindTTL Kind = "ttl"
	// KindDemand is a candidate at the stated demand, at the tuned TTL.
	KindDemand Kind = "demand"
	// KindCapacity is a candidate closed-loop at -c workers: the most it
	// sustains, against an open-loop demand (--rate only).
	KindCapacity Kind = "capacity"
	// KindFault is a candidate under one failure that matters for its kind.
	KindFault Kind = "fault"
)

// Settings advise runs every experiment with.
const (
	// Retry is the acquire retry of every run: waiters on a held key back
	// off (full jitter) rather than hammer it.
	Retry = "exp:1ms,50ms"
	// Warmup is every run's unrecorded warm-up: short, since each window is
	// judged on its own and the budget is better spent measuring.
	Warmup = 250 * time.Millisecond
	// minWindow and maxWindow bound a measured window; a fault's window is
	// at least minFaultWindow, so the fault lands and the lock recovers in it.
	minWindow      = time.Second
	minFaultWindow = 3 * time.Second
	maxWindow      = 30 * time.Second
	// planShare is the share of the budget the plan fills: the rest absorbs
	// a loaded machine's slower start-ups and the page's rendering.
	planShare = 0.9
	// HardShare is how far past the budget the command may run before it
	// stops the experiment in flight: it ends within 1.25 × the budget.
	HardShare = 1.2
)

// Experiment is one run of the plan.
type Experiment struct {
	// Name is unique in the plan and stable across runs of one input.
	Name string `json:"name"`
	// Kind is what it asks.
	Kind Kind `json:"kind"`
	// Candidate is the lock and topology it runs.
	Candidate sweep.LockSpec `json:"candidate"`
	// TTL and RenewEvery are a TTL cell's coordinates; the other kinds run
	// at the TTL and renewal the tuning recommends.
	TTL        string `json:"ttl,omitempty"`
	RenewEvery string `json:"renew_every,omitempty"`
	// Fault is a fault experiment's fault, in --fault's words, with "TTL"
	// standing for the tuned TTL where its size depends on it.
	Fault string `json:"fault,omitempty"`
	// Window is the measured window.
	Window time.Duration `json:"window"`
	// Estimate is its expected wall time: start-up, warm-up, window, drain.
	Estimate time.Duration `json:"estimate"`
	// Why says what question it answers.
	Why string `json:"why"`

	fault     faultPlan
	priority  int
	weight    float64
	minWindow time.Duration
	overhead  time.Duration
}

// faultPlan builds a fault experiment's --fault for a TTL and window.
type faultPlan struct {
	name  string
	build func(ttl, window time.Duration) (compose.FaultSpec, time.Duration)
}

// Profile is what the plan reads of the work.
type Profile struct {
	// Hold99 and Pause99 are the hold's and the pause's p99 (Pause99 is 0
	// without pauses).
	Hold99  time.Duration `json:"hold_p99"`
	Pause99 time.Duration `json:"pause_p99"`
	// PauseProb is the share of holders that pause.
	PauseProb float64 `json:"pause_prob"`
	// OpenLoop is true when the demand is a request rate.
	OpenLoop bool `json:"open_loop"`
	// Demand is the rate (open loop) or the workers (closed loop).
	Demand float64 `json:"demand"`
	// Concurrency is the workers (open loop: most requests in flight).
	Concurrency int `json:"concurrency"`
}

// DemandText says the demand in words.
func (p Profile) DemandText() string {
	if p.OpenLoop {
		return fmt.Sprintf("%s requests/s", formatRate(p.Demand))
	}
	return fmt.Sprintf("%d workers", p.Concurrency)
}

// Plan is the experiments advise runs, fitted to the budget.
type Plan struct {
	// Input is what the plan was made from.
	Input Input `json:"-"`
	// Profile is the work as the plan read it.
	Profile Profile `json:"profile"`
	// TTLs and Renews are the tuning's axes; TTLCapped says the longest
	// TTL the budget can judge is below what the pauses would need.
	TTLs      []string `json:"ttls"`
	Renews    []string `json:"renews"`
	TTLCapped bool     `json:"ttl_capped,omitempty"`
	// Experiments run in order.
	Experiments []Experiment `json:"experiments"`
	// Left are the experiments left out to fit the budget, with why.
	Left []string `json:"left_out,omitempty"`
	// Budget and Total are the budget and the experiments' estimated sum.
	Budget time.Duration `json:"budget"`
	Total  time.Duration `json:"total"`
}

// ProfileOf reads the work flags: the hold's and pause's p99 (sampled with a
// fixed seed, so one input always plans alike) and the demand.
func ProfileOf(work plan.Values) (Profile, error) {
	v, err := plan.Resolve(work)
	if err != nil {
		return Profile{}, err
	}
	pl, err := plan.Parse(v)
	if err != nil {
		return Profile{}, err
	}
	wl := pl.Workload
	p := Profile{Hold99: quantile(wl.Hold, 0.99), PauseProb: wl.PauseProb, Concurrency: pl.Bench.Concurrency}
	if wl.PauseProb > 0 {
		p.Pause99 = quantile(wl.Pause, 0.99)
	}
	rate, err := workloads.ParseRate("rate", v.Get("rate"))
	if err != nil {
		return Profile{}, &plan.InputError{Flag: "rate", Msg: err.Error()}
	}
	p.OpenLoop, p.Demand = rate.Start > 0, rate.Start
	if !p.OpenLoop {
		p.Demand = float64(p.Concurrency)
	}
	return p, nil
}

// quantile samples d with a fixed seed and returns its q-quantile.
func quantile(d workloads.Dist, q float64) time.Duration {
	if d == nil {
		return 0
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 4000
	xs := make([]time.Duration, n)
	for i := range xs {
		xs[i] = d.Sample(rng)
	}
	slices.Sort(xs)
	return xs[min(n-1, int(math.Ceil(q*n))-1)].Round(100 * time.Microsecond)
}

// niceUp rounds d up to 1, 2 or 5 times a power of ten milliseconds.
func niceUp(d time.Duration) time.Duration {
	ms := float64(d) / float64(time.Millisecond)
	if ms <= 1 {
		return time.Millisecond
	}
	p := math.Pow(10, math.Floor(math.Log10(ms)))
	for _, m := range []float64{1, 2, 5, 10} {
		if ms <= m*p*1.0000001 {
			return time.Duration(m*p) * time.Millisecond
		}
	}
	return d
}

// niceDown rounds d down to 1, 2 or 5 times a power of ten milliseconds.
func niceDown(d time.Duration) time.Duration {
	ms := float64(d) / float64(time.Millisecond)
	if ms < 1 {
		return time.Millisecond
	}
	p := math.Pow(10, math.Floor(math.Log10(ms)))
	for _, m := range []float64{5, 2, 1} {
		if ms >= m*p {
			return time.Duration(m*p) * time.Millisecond
		}
	}
	return d
}

// minTTLFloor is the shortest TTL advise tries: below it a lease is
// mostly round trips and scheduling noise on a shared machine.
const minTTLFloor = 100 * time.Millisecond

// Ladder is the TTLs the tuning tries (rule: the floor, twice the hold's
// p99 and at least 100ms; four times the floor; and one rung above the
// pauses, 2 × (hold p99 + pause p99), or 16 × the floor without pauses),
// none longer than the longest TTL the budget can judge (budget / 40,
// so that a window holds several TTLs). capped says the pause rung was cut.
func Ladder(p Profile, budget time.Duration, lock string) (ttls []time.Duration, capped bool) {
	floor := niceUp(max(minTTLFloor, 2*p.Hold99))
	top := 16 * floor
	if p.Pause99 > 0 {
		top = niceUp(2 * (p.Hold99 + p.Pause99))
	}
	ceiling := max(floor, niceDown(budget/40))
	for _, t := range []time.Duration{floor, niceUp(4 * floor), top} {
		if t > ceiling {
			t, capped = ceiling, capped || p.Pause99 > 0
		}
		t = ttlFor(lock, t)
		if !slices.Contains(ttls, t) {
			ttls = append(ttls, t)
		}
	}
	slices.Sort(ttls)
	return ttls, capped
}

// ttlFor is a TTL as the lock takes it: on its TTL grain, from its local
// servers' shortest (lockimpl.Descriptor.FitTTL: etcd and NATS count whole
// seconds).
func ttlFor(lock string, ttl time.Duration) time.Duration {
	if lock == lockimpl.LockZk {
		// The lease is the session, which local members hold within bounds.
		lo, hi := compose.ZkSessionBounds(compose.DefaultZkTick)
		return min(max(lo, ttl), hi)
	}
	d, _ := lockimpl.Describe(lock)
	return d.FitTTL(ttl)
}

// renewalsFor are the tuning's renewal intervals at one TTL: none, and a
// third of the TTL where the hold's p99 outlasts a third of the TTL (a
// shorter hold ends before its first renewal, so that cell would repeat
// the one without) and the lock has a lease to renew.
func renewalsFor(p Profile, ttl time.Duration, lock string) []string {
	if p.Hold99 > ttl/3 && plan.Renewable(lock) {
		return []string{"0", "ttl/3"}
	}
	return []string{"0"}
}

// NewPlan makes the plan for in and fits it to the budget.
func NewPlan(in Input) (Plan, error) {
	if err := in.Check(); err != nil {
		return Plan{}, err
	}
	prof, err := ProfileOf(in.Work)
	if err != nil {
		return Plan{}, err
	}
	p := Plan{Input: in, Profile: prof, Budget: in.Budget}
	first := in.Candidates[0]
	ttls, capped := Ladder(prof, in.Budget, first.Lock)
	p.TTLCapped = capped
	longest := ttls[len(ttls)-1]
	drain := prof.Hold99 + prof.Pause99
	var all []Experiment
	for j, ttl := range ttls {
		p.TTLs = append(p.TTLs, ttl.String())
		for _, r := range renewalsFor(prof, ttl, first.Lock) {
			if !slices.Contains(p.Renews, r) {
				p.Renews = append(p.Renews, r)
			}
		}
		for k, renew := range renewalsFor(prof, ttl, first.Lock) {
			e := Experiment{Kind: KindTTL, Candidate: first, TTL: ttl.String(), RenewEvery: renew,
				Name:     fmt.Sprintf("ttl %s renew %s", ttl, renewText(renew)),
				Why:      fmt.Sprintf("TTL tuning on %s: how often a holder outlives a %s lease %s", first, ttl, renewWords(renew)),
				priority: 90 - j - 40*k, weight: 1.5, minWindow: minWindow}
			all = append(all, e)
		}
	}
	for i, c := range in.Candidates {
		all = append(all, Experiment{Kind: KindDemand, Candidate: c, Name: "demand " + c.String(),
			Why:      fmt.Sprintf("at your demand (%s): throughput and p99 against the SLO; lease overruns and stale writes at the tuned TTL", prof.DemandText()),
			priority: 100 - 2*i, weight: 1.5, minWindow: minWindow})
		if prof.OpenLoop {
			all = append(all, Experiment{Kind: KindCapacity, Candidate: c, Name: "capacity " + c.String(),
				Why:      fmt.Sprintf("the most it sustains, closed loop at %d workers, against your demand", prof.Concurrency),
				priority: 70 - i, weight: 1, minWindow: minWindow})
		}
		if in.external(c) {
			continue
		}
		for k, f := range faultsFor(c) {
			spec, _ := f.build(longest, minFaultWindow)
			all = append(all, Experiment{Kind: KindFault, Candidate: c, Name: fmt.Sprintf("fault %s %s", c, f.name), fault: f,
				Fault:    faultText(spec, longest),
				Why:      fmt.Sprintf("when %s: double grants, stale writes accepted or refused%s", faultWords(spec), keysWords(in.Work, prof)),
				priority: 50 - i - 10*k, weight: 1, minWindow: minFaultWindow})
		}
	}
	for i := range all {
		all[i].overhead = overhead(all[i], drain, longest)
	}
	p.Experiments, p.Left = fit(all, in.Budget)
	for _, e := range p.Experiments {
		p.Total += e.Estimate
	}
	return p, nil
}

// overhead is an experiment's wall time beside its window: its servers'
// start-up and stop (compose.KindInfo.StartUp), the warm-up, the drain
// of holders inside at the window's close, and a fault that lengthens the
// window (a pause on single).
func overhead(e Experiment, drain, ttl time.Duration) time.Duration {
	spec, err := compose.ParseSpec(e.Candidate.Topology)
	o := Warmup + drain
	if err == nil {
		o += spec.Info().StartUp
	}
	if e.Kind == KindFault {
		_, w := e.fault.build(ttl, minFaultWindow)
		o += w - minFaultWindow
	}
	return o
}

// fit drops the lowest-priority experiments until every one gets its
// minimum window within planShare of the budget, then shares the rest out
// by weight (each window at most maxWindow, in 100ms steps).
func fit(all []Experiment, budget time.Duration) (kept []Experiment, left []string) {
	kept = append([]Experiment(nil), all...)
	avail := time.Duration(float64(budget) * planShare)
	for len(kept) > 0 {
		var need time.Duration
		for _, e := range kept {
			need += e.overhead + e.minWindow
		}
		if need <= avail {
			break
		}
		worst := 0
		for i, e := range kept {
			if e.priority < kept[worst].priority || (e.priority == kept[worst].priority && i > worst) {
				worst = i
			}
		}
		left = append(left, kept[worst].Name+": left out to fit the budget")
		kept = slices.Delete(kept, worst, worst+1)
	}
	windows := share(kept, avail)
	for i := range kept {
		kept[i].Window = windows[i]
		kept[i].Estimate = kept[i].overhead + windows[i]
	}
	return kept, left
}

// share divides what the budget leaves after the overheads among the
// experiments by weight, in 100ms steps: one whose share is below its
// minimum window gets the minimum, and the rest share what is left; none
// gets more than maxWindow.
func share(exps []Experiment, avail time.Duration) []time.Duration {
	windows := make([]time.Duration, len(exps))
	pinned := make([]bool, len(exps))
	for {
		spare, weights := avail, 0.0
		for i, e := range exps {
			spare -= e.overhead
			if pinned[i] {
				spare -= windows[i]
			} else {
				weights += e.weight
			}
		}
		changed := false
		for i, e := range exps {
			if pinned[i] {
				continue
			}
			w := time.Duration(float64(spare) * e.weight / weights).Truncate(100 * time.Millisecond)
			switch {
			case w < e.minWindow:
				windows[i], pinned[i], changed = e.minWindow, true, true
			case w > maxWindow:
				windows[i], pinned[i], changed = maxWindow, true, true
			default:
				windows[i] = w
			}
		}
		if !changed {
			return windows
		}
	}
}

// faultsFor are the failures that matter for a candidate: its kind's
// canonical fault (compose.Shape.CanonicalFault: a pause past the TTL on
// single, a failover on replicated, the leader killed on etcd, a holder's
// session ended on PostgreSQL, one master killed on Redlock), and on
// Redlock also a master restarting empty and a master's clock jumping past
// the TTL, where the kind takes those faults from local servers.
func faultsFor(c sweep.LockSpec) []faultPlan {
	spec, err := compose.ParseSpec(c.Topology)
	if err != nil {
		return nil
	}
	canonical := func(ttl, w time.Duration) (compose.FaultSpec, time.Duration) { return spec.CanonicalFault(ttl, w) }
	f, _ := canonical(time.Second, minFaultWindow)
	out := []faultPlan{{name: string(f.Kind) + " " + f.TargetString(), build: canonical}}
	if c.Lock != lockimpl.LockRedlock {
		return out
	}
	// Redlock's further experiments, written as --fault reads them and
	// struck a third into the window, where its local servers take them.
	extra := func(name string, text func(ttl time.Duration) string) {
		build := func(ttl, w time.Duration) (compose.FaultSpec, time.Duration) {
			f, _ := compose.ParseFault("at=" + (w / 3).Round(time.Millisecond).String() + " " + text(ttl))
			return f, w
		}
		if f, _ := build(time.Second, minFaultWindow); compose.FitFault(f, spec, compose.ProviderLocal) == nil {
			out = append(out, faultPlan{name: name, build: build})
		}
	}
	extra("restart node=0", func(time.Duration) string { return "restart node=0" })
	extra("clock-jump node=0", func(ttl time.Duration) string {
		return "clock-jump node=0 +" + (ttl + ttl/10).Round(time.Millisecond).String()
	})
	return out
}

// faultText is the fault as the plan shows it before the TTL is tuned.
func faultText(f compose.FaultSpec, ttl time.Duration) string {
	s := f.String()
	for _, d := range []time.Duration{ttl + ttl/10} {
		s = strings.ReplaceAll(s, d.Round(time.Millisecond).String(), "1.1×TTL")
	}
	return strings.TrimPrefix(s, "at="+f.At.String()+" ")
}

// faultWords says what a fault does, for a why.
func faultWords(f compose.FaultSpec) string { return f.Effect() }

// keysWords says when a fault experiment contends on fewer keys than the work.
func keysWords(work plan.Values, prof Profile) string {
	if k := contendedKeys(work, prof); k != "" {
		return " (keys " + k + ", so holders contend)"
	}
	return ""
}

func renewText(r string) string {
	if r == "0" {
		return "off"
	}
	return r
}

func renewWords(r string) string {
	if r == "0" {
		return "without renewal"
	}
	return "renewed every " + r
}

func formatRate(r float64) string {
	return results.Figure{Unit: results.UnitPerS}.Format(r)
}

// Values are the run flags of an experiment, at the tuned TTL and renewal
// for all but the tuning's own cells.
func (p Plan) Values(e Experiment, t Tuning) plan.Values {
	in, c := p.Input, e.Candidate
	v := plan.Values{}
	for _, name := range workFlags {
		if in.Work.Has(name) {
			v[name] = append([]string(nil), in.Work[name]...)
		}
	}
	v.Set("lock", c.Lock)
	v.Set("topology", c.Topology)
	if in.external(c) {
		v.Set("redis", in.Redis[0])
	}
	v.Set("retry", Retry)
	v.Set("warmup", Warmup.String())
	v.Set("duration", e.Window.String())
	ttl, renew := e.TTL, e.RenewEvery
	if e.Kind != KindTTL {
		ttl, renew = t.TTL, t.RenewEvery
	}
	d, err := time.ParseDuration(ttl)
	if err == nil {
		ttl = ttlFor(c.Lock, d).String()
	}
	v.Set("ttl", ttl)
	if !plan.Renewable(c.Lock) {
		renew = "0"
	}
	v.Set("renew-every", renew)
	switch e.Kind {
	case KindCapacity:
		delete(v, "rate")
	case KindFault:
		f, w := e.fault.build(d, e.Window)
		v.Set("fault", f.String())
		v.Set("duration", w.String())
		if keys := contendedKeys(in.Work, p.Profile); keys != "" {
			v.Set("keys", keys)
		}
	}
	for name := range v {
		if plan.Scoped(name) && !plan.AppliesTo(name, c.Lock, c.Topology, in.external(c)) {
			delete(v, name)
		}
	}
	if in.Out != "" {
		v.Set("out", in.Out)
	}
	v.Set("label", "advise "+e.Name)
	return v
}

// contendedKeys is the key chooser of a fault experiment when the work's
// keys are unique: a quarter as many keys as workers, so that holders wait
// for each other's keys and a fault that breaks mutual exclusion shows as a
// double grant or a stale write (on unique keys no second holder ever
// comes). "" keeps the work's keys.
func contendedKeys(work plan.Values, prof Profile) string {
	if k := work.Get("keys"); k != "" && k != "0" && k != "unique" {
		return ""
	}
	return fmt.Sprintf("uniform:%d", max(1, prof.Concurrency/4))
}

// Check parses every experiment's run flags (at the plan's longest TTL,
// with and without renewal, for those that run at the tuned one), so bad input fails before anything
// starts.
func (p Plan) Check() error {
	for _, renew := range []string{"0", "ttl/3"} {
		t := Tuning{TTL: p.TTLs[len(p.TTLs)-1], RenewEvery: renew}
		for _, e := range p.Experiments {
			if _, err := plan.Expand(p.Values(e, t)); err != nil {
				// The lock and the topology come from --candidate: say so,
				// rather than name an experiment the user never wrote.
				var ie *plan.InputError
				if errors.As(err, &ie) && (ie.Flag == "lock" || ie.Flag == "topology") {
					return &plan.InputError{Flag: "candidate", Msg: fmt.Sprintf("%s: %s", e.Candidate, ie.Msg)}
				}
				return fmt.Errorf("advise %s: %w", e.Name, err)
			}
		}
	}
	return nil
}

// WritePlan prints the plan: each experiment with its window, estimate and
// why, the total against the budget, and what was left out.
func WritePlan(w io.Writer, p Plan) error {
	pr := p.Profile
	fmt.Fprintf(w, "advise plan: %d experiments, about %s of a %s budget (the command stops by %s)\n",
		len(p.Experiments), p.Total.Round(time.Second), p.Budget, time.Duration(float64(p.Budget)*1.25).Round(time.Second))
	pauses := "no pauses"
	if pr.PauseProb > 0 {
		pauses = fmt.Sprintf("%s of holders pause, p99 %s", results.FigureText("holders_pausing", pr.PauseProb), pr.Pause99)
	}
	fmt.Fprintf(w, "work: hold p99 %s, %s, demand %s; TTLs tried %s × renewal %s\n",
		pr.Hold99, pauses, pr.DemandText(), strings.Join(p.TTLs, ", "), strings.Join(mapStrings(p.Renews, renewText), ", "))
	t := results.NewTable(w, results.LabelColumn("#"), results.LabelColumn("experiment"), results.LabelColumn("window"), results.LabelColumn("est."),
		results.LabelColumn("why")).Configure(func(cfg *tablewriter.Config) {
		cfg.Row.Alignment.PerColumn = []tw.Align{tw.AlignRight, tw.AlignLeft, tw.AlignRight, tw.AlignRight, tw.AlignLeft}
	})
	for i, e := range p.Experiments {
		name := e.Name
		if e.Kind == KindFault {
			name = fmt.Sprintf("fault %s: %s", e.Candidate, e.Fault)
		}
		_ = t.Append(i+1, wrap(name, 30), e.Window.String(), e.Estimate.Round(100*time.Millisecond).String(), wrap(e.Why, 58))
	}
	if err := t.Render(); err != nil {
		return err
	}
	fmt.Fprintf(w, "total: about %s of %s (servers' start-up included)\n", p.Total.Round(time.Second), p.Budget)
	if p.TTLCapped {
		// Two lines: one would pass 120 columns with long durations.
		fmt.Fprintf(w, "note: your pauses (p99 %s) outlast the longest TTL a %s budget can judge (%s);\n      a longer --budget tries longer TTLs\n",
			pr.Pause99, p.Budget, p.TTLs[len(p.TTLs)-1])
	}
	for _, l := range p.Left {
		fmt.Fprintf(w, "  %s\n", l)
	}
	return nil
}

func mapStrings(xs []string, f func(string) string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

// wrap breaks s into lines of at most width runes at spaces, for a table
// cell that must keep the table within a terminal's width.
func wrap(s string, width int) string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		switch {
		case line == "":
			line = word
		case len([]rune(line))+1+len([]rune(word)) > width:
			lines = append(lines, line)
			line = word
		default:
			line += " " + word
		}
	}
	return strings.Join(append(lines, line), "\n")
}
