package advise

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/bench/sweep"
	"github.com/lockbench/lockbench/bench/verdict"
	"github.com/lockbench/lockbench/results"
)

// Status is how an experiment ended.
type Status string

// The statuses of an experiment.
const (
	// Measured: it ran and its result is stored.
	Measured Status = "measured"
	// Reused: a stored result of the same resolved configuration stands
	// for it (--resume).
	Reused Status = "reused"
	// Failed: it could not run (a server that did not start).
	Failed Status = "failed"
	// Skipped: it was not run, for the reason in Detail.
	Skipped Status = "skipped"
	// Interrupted: it was cut short; its partial result is stored but not
	// used, since a partial window proves less than it seems to.
	Interrupted Status = "interrupted"
)

// Outcome is one experiment as it ended.
type Outcome struct {
	// Experiment is what was planned.
	Experiment Experiment `json:"experiment"`
	// Flags are its run flags, as lockbench run would take them.
	Flags string `json:"flags"`
	// Status is how it ended; Detail says why where it was not measured.
	Status Status `json:"status"`
	Detail string `json:"detail,omitempty"`
	// RunID is its stored result ("" when none was stored).
	RunID string `json:"run,omitempty"`
	// Wall is how long it took (0 when reused or not run).
	Wall time.Duration `json:"wall"`
	// Result is its result when measured or reused.
	Result *results.Result `json:"-"`
}

// Usable reports whether the outcome's result is evidence.
func (o Outcome) Usable() bool {
	return o.Result != nil && (o.Status == Measured || o.Status == Reused)
}

// Tuning is the TTL and renewal the experiments after the tuning run at.
type Tuning struct {
	// TTL and RenewEvery are the chosen cell's.
	TTL        string `json:"ttl"`
	RenewEvery string `json:"renew_every"`
	// Cells are the tuning's measured cells and Rec its verdict.
	Cells []sweep.TuneCell     `json:"cells"`
	Rec   sweep.Recommendation `json:"recommendation"`
	// Proven is true when the cell met the target (Rec.Best).
	Proven bool `json:"proven"`
}

// Progress is told before each experiment runs.
type Progress struct {
	// Done of Total experiments are behind; Label is the next one.
	Done, Total int
	Label       string
	// Elapsed is the time so far; ETA the estimate of what is left.
	Elapsed, ETA time.Duration
}

// Deps are what Run needs from outside.
type Deps struct {
	// Run executes and stores one run.
	Run sweep.Runner
	// Stored are results a run may reuse (--resume); nil runs everything.
	Stored []*results.Result
	// Progress, when set, is told before each experiment.
	Progress func(Progress)
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// TrialOptions are how a command of trials (renewal-check's cells,
// scenario's variants) spends them: the planned trials, then, within a
// budget, more trials of whatever the k-of-n rule leaves undecided.
type TrialOptions struct {
	// Trials is the planned trials (or runs) per cell or variant.
	Trials int
	// Level is the share of trials a word of safety must bound the harm
	// under (verdict.DefaultLevel when 0).
	Level float64
	// Budget is the wall time for the planned trials and the undecided
	// ones' more; 0 runs the planned trials only.
	Budget time.Duration
	// Stored are results a trial may reuse (--resume): one of the same
	// label and configuration stands for it.
	Stored []*results.Result
	// Progress, when set, is told before each run.
	Progress func(Progress)
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Parallel is how many trials run at once, each on its own servers
	// (--parallel; 0 counts as 1).
	Parallel int
}

// LevelOrDefault is the level, verdict.DefaultLevel when unset.
func (o TrialOptions) LevelOrDefault() float64 {
	if o.Level > 0 {
		return o.Level
	}
	return verdict.DefaultLevel
}

// Clock is the options' clock.
func (o TrialOptions) Clock() func() time.Time {
	if o.Now == nil {
		return time.Now
	}
	return o.Now
}

// Reusable is a stored complete result of the run v describes (--resume).
func (o TrialOptions) Reusable(v plan.Values) *results.Result { return MatchLabelled(o.Stored, v) }

// MatchLabelled is Match among the stored results of v's label: a run of a
// batch that names its runs (a trial, a failover) is found by its name and
// its configuration.
func MatchLabelled(stored []*results.Result, v plan.Values) *results.Result {
	var same []*results.Result
	for _, r := range stored {
		if r.Label == v.Get("label") {
			same = append(same, r)
		}
	}
	return Match(same, v)
}

// Evidence is what the experiments left.
type Evidence struct {
	// Plan is what was planned.
	Plan Plan `json:"plan"`
	// Outcomes are the experiments in plan order.
	Outcomes []Outcome `json:"outcomes"`
	// Tuning is the TTL and renewal the later experiments ran at.
	Tuning Tuning `json:"tuning"`
	// Elapsed is the wall time of the experiments.
	Elapsed time.Duration `json:"elapsed"`
	// Interrupted is true when Ctrl-C (or the caller) stopped the runs.
	Interrupted bool `json:"interrupted"`
}

// Run runs the plan's experiments in order: the TTL cells first, then, at
// the TTL and renewal they recommend, each candidate's experiments. A
// result of the same resolved configuration, stored (--resume) or measured
// earlier in this run, is reused instead of a run. An experiment that would end past HardShare × the budget is
// skipped; one still running at that limit is cut short. A candidate whose
// servers did not start has its other experiments skipped. When ctx ends,
// what finished is kept and the rest is marked not run.
func Run(ctx context.Context, p Plan, deps Deps) Evidence {
	now := deps.Now
	if now == nil {
		now = time.Now
	}
	start := now()
	hard := time.Duration(float64(p.Budget) * HardShare)
	runCtx, cancel := context.WithDeadline(ctx, start.Add(hard))
	defer cancel()
	ev := Evidence{Plan: p}
	failed := map[string]string{}
	tuned := false
	var spent, planned time.Duration
	// own are this run's results, newest first: an experiment whose
	// configuration one of them already has (the first candidate at the
	// demand, at a TTL cell's TTL and renewal) reuses it.
	var own []*results.Result
	for i, e := range p.Experiments {
		if e.Kind != KindTTL && !tuned {
			ev.Tuning, tuned = Tune(ev.Outcomes, p), true
		}
		v := p.Values(e, ev.Tuning)
		o := Outcome{Experiment: e, Flags: flagsText(v)}
		elapsed := now().Sub(start)
		switch r := Match(append(own, deps.Stored...), v); {
		case ctx.Err() != nil:
			o.Status, o.Detail = Skipped, "not run: interrupted before it started"
			ev.Interrupted = true
		case r != nil:
			o.Status, o.RunID, o.Result = Reused, r.ID, r
		case failed[e.Candidate.String()] != "":
			o.Status, o.Detail = Skipped, "not run: "+e.Candidate.String()+" failed earlier ("+failed[e.Candidate.String()]+")"
		case elapsed+scaled(e.Estimate, spent, planned) > hard:
			o.Status, o.Detail = Skipped, fmt.Sprintf("not run: at %s it would end past %s (1.2 × the budget); give a longer --budget, or --resume to add it",
				elapsed.Round(time.Second), hard.Round(time.Second))
		default:
			if deps.Progress != nil {
				deps.Progress(Progress{Done: i, Total: len(p.Experiments), Label: e.Name, Elapsed: elapsed, ETA: eta(p.Experiments[i:], spent, planned)})
			}
			o = measure(ctx, runCtx, deps.Run, o, v, now)
			if o.Status == Measured {
				own = append([]*results.Result{o.Result}, own...)
			}
			spent, planned = spent+o.Wall, planned+e.Estimate
			if o.Status == Failed {
				failed[e.Candidate.String()] = o.Detail
			}
			if ctx.Err() != nil {
				ev.Interrupted = true
			}
		}
		ev.Outcomes = append(ev.Outcomes, o)
	}
	if !tuned {
		ev.Tuning = Tune(ev.Outcomes, p)
	}
	ev.Elapsed = now().Sub(start)
	return ev
}

// measure runs one experiment and says how it ended.
func measure(ctx, runCtx context.Context, run sweep.Runner, o Outcome, v plan.Values, now func() time.Time) Outcome {
	t0 := now()
	r, err := run(runCtx, v.Clone(), "", 0)
	o.Wall = now().Sub(t0).Round(time.Millisecond)
	switch {
	case err != nil && runCtx.Err() != nil:
		o.Status, o.Detail = Interrupted, "interrupted before its window: nothing measured"
		if ctx.Err() == nil {
			o.Detail = "cut at 1.2 × the budget before its window: nothing measured"
		}
	case err != nil:
		o.Status, o.Detail = Failed, oneLine(err)
	case r.Partial:
		o.Status, o.RunID = Interrupted, r.ID
		o.Detail = "interrupted in its window: its partial result is stored, not used"
		if ctx.Err() == nil {
			o.Detail = "cut at 1.2 × the budget: its partial result is stored, not used"
		}
	default:
		o.Status, o.RunID, o.Result = Measured, r.ID, r
	}
	return o
}

// scaled is an estimate corrected by how the runs so far compared with
// theirs (never below the estimate: a fast start proves little).
func scaled(est, spent, planned time.Duration) time.Duration {
	if planned <= 0 || spent <= planned {
		return est
	}
	return time.Duration(float64(est) * float64(spent) / float64(planned))
}

// eta is the time the experiments left should take.
func eta(left []Experiment, spent, planned time.Duration) time.Duration {
	var sum time.Duration
	for _, e := range left {
		sum += scaled(e.Estimate, spent, planned)
	}
	return sum
}

func oneLine(err error) string {
	s := err.Error()
	if errors.Is(err, plan.ErrInterrupted) {
		return "interrupted"
	}
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// flagsText renders run flags as lockbench run takes them, sorted.
func flagsText(v plan.Values) string {
	names := make([]string, 0, len(v))
	for k := range v {
		if k != "label" && k != "out" && k != "quiet" {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	var parts []string
	for _, k := range names {
		for _, s := range v[k] {
			s = plan.Shown(k, s)
			if strings.ContainsAny(s, " ,") {
				s = "'" + s + "'"
			}
			parts = append(parts, "--"+k+" "+s)
		}
	}
	return strings.Join(parts, " ")
}

// Match finds, among stored results, a complete one whose configuration is
// the one v resolves to (the newest first, as results.List gives them). The
// result records its configuration as it ran (plan's resolvedConfig): the
// key chooser in its canonical form, and figures derived from the others
// (acquire timeout, pool size, provider, node timeout), so those are
// compared through what they derive from.
func Match(stored []*results.Result, v plan.Values) *results.Result {
	if len(stored) == 0 {
		return nil
	}
	resolved, err := plan.Resolve(v)
	if err != nil {
		return nil
	}
	pl, err := plan.Parse(resolved)
	if err != nil {
		return nil
	}
	want := resolved.Config()
	want["keys"] = pl.Workload.Keys.String()
	for _, r := range stored {
		if !r.Partial && sameConfig(want, r.Config) {
			return r
		}
	}
	return nil
}

// derived are config entries a run records as it resolved them from others.
var derived = []string{"acquire-timeout", "provider", "pool-size", "pipeline", "node-timeout", "cpus"}

func sameConfig(want, got map[string]any) bool {
	for k, w := range want {
		if slices.Contains(derived, k) {
			continue
		}
		g, ok := got[k]
		if !ok || fmt.Sprint(w) != fmt.Sprint(g) {
			return false
		}
	}
	return true
}

// Tune reduces the measured TTL cells to tune-ttl's cells and applies its
// rule (sweep.Recommend): the shortest-blocking cell whose incident bound
// is under the target. With none proven, the closest cell; with none
// measured, the longest TTL without renewal.
func Tune(outs []Outcome, p Plan) Tuning {
	g := sweep.Grid{Base: plan.Values{}, Axes: []sweep.Axis{{Flag: "ttl"}, {Flag: "renew-every"}}}
	var crs []sweep.CellResult
	for _, o := range outs {
		if o.Experiment.Kind != KindTTL || !o.Usable() {
			continue
		}
		crs = append(crs, sweep.CellResult{Cell: sweep.Cell{Coords: []string{o.Experiment.TTL, o.Experiment.RenewEvery}}, Results: []*results.Result{o.Result}})
	}
	target := p.Input.Req.MaxIncidentRate
	t := Tuning{Cells: sweep.TuneCells(g, crs, target)}
	t.Rec = sweep.Recommend(t.Cells, target)
	switch {
	case t.Rec.Best != nil:
		t.TTL, t.RenewEvery, t.Proven = t.Rec.Best.TTL, t.Rec.Best.RenewEvery, true
	case t.Rec.Closest != nil:
		t.TTL, t.RenewEvery = t.Rec.Closest.TTL, t.Rec.Closest.RenewEvery
	default:
		t.TTL, t.RenewEvery = p.TTLs[len(p.TTLs)-1], "0"
	}
	return t
}
