package advise

import (
	"fmt"
	"strings"
	"time"

	"github.com/lockbench/lockbench/bench/sweep"
	"github.com/lockbench/lockbench/bench/verdict"
	"github.com/lockbench/lockbench/results"
)

// Part is a piece of a verdict: plain text, or a number with the stored
// results it rests on.
type Part struct {
	Text string   `json:"text"`
	Runs []string `json:"runs,omitempty"`
}

// Verdict answers one question.
type Verdict struct {
	// Question is what it answers.
	Question string `json:"question"`
	// Answer is the sentence, its numbers citing their runs.
	Answer []Part `json:"answer"`
	// Thin says where the evidence is too thin, and what to run longer.
	Thin []string `json:"thin,omitempty"`
}

// Row is one experiment as the page lists it.
type Row struct {
	// N is its number, the citation mark of its result.
	N int `json:"n"`
	Outcome
}

// Page is the advice.
type Page struct {
	// Title names the candidates and the requirements.
	Title string `json:"title"`
	// Requirements restate what the advice must meet.
	Requirements string `json:"requirements"`
	// Work restates the work as the plan read it.
	Work string `json:"work"`
	// Budget and Elapsed are the budget and the experiments' wall time.
	Budget  time.Duration `json:"budget"`
	Elapsed time.Duration `json:"elapsed"`
	// Verdicts answer the questions, in order.
	Verdicts []Verdict `json:"verdicts"`
	// Judgements are every candidate against the rules.
	Judgements []Judgement `json:"candidates"`
	// Tuning is the TTL × renewal tuning.
	Tuning Tuning `json:"tuning"`
	// Faults are the fault experiments' cells.
	Faults []Cell `json:"faults"`
	// Missing lists what was planned and not measured, and why.
	Missing []string `json:"missing,omitempty"`
	// Experiments are every experiment with its status and configuration.
	Experiments []Row `json:"experiments"`
	// Interrupted is true when the runs were stopped before the end.
	Interrupted bool `json:"interrupted"`
	// Left are the experiments the plan left out to fit the budget.
	Left []string `json:"left_out,omitempty"`

	refs map[string]int
}

// Ref is the citation number of a run, 0 when the page lists no such run.
func (p Page) Ref(id string) int { return p.refs[id] }

// num is a number citing runs.
func num(text string, runs ...string) Part { return Part{Text: text, Runs: runs} }

// txt is plain text.
func txt(format string, args ...any) Part { return Part{Text: fmt.Sprintf(format, args...)} }

// Build computes the page from the evidence by the rules of rules.go.
func Build(ev Evidence) Page {
	p := ev.Plan
	in, prof := p.Input, p.Profile
	pg := Page{Budget: p.Budget, Elapsed: ev.Elapsed.Round(time.Second), Tuning: ev.Tuning, Interrupted: ev.Interrupted, Left: p.Left, refs: map[string]int{}}
	var names []string
	for _, c := range in.Candidates {
		names = append(names, c.String())
	}
	pg.Title = "lockbench advise: " + strings.Join(names, ", ")
	pg.Requirements = requirementsText(in.Req)
	pg.Work = workText(prof)
	demand := map[string]Cell{}
	capacity := map[string]Cell{}
	for i, o := range ev.Outcomes {
		pg.Experiments = append(pg.Experiments, Row{N: i + 1, Outcome: o})
		if o.RunID != "" {
			pg.refs[o.RunID] = i + 1
		}
		if !o.Usable() {
			pg.Missing = append(pg.Missing, fmt.Sprintf("[%d] %s: %s — %s", i+1, o.Experiment.Name, o.Status, o.Detail))
			continue
		}
		c := CellOf(o, in.Req, prof)
		switch o.Experiment.Kind {
		case KindDemand:
			demand[c.Candidate] = c
		case KindCapacity:
			capacity[c.Candidate] = c
		case KindFault:
			pg.Faults = append(pg.Faults, c)
		}
	}
	for _, n := range names {
		if c, ok := demand[n]; ok {
			pg.Judgements = append(pg.Judgements, Judge(c, in.Req))
			continue
		}
		pg.Judgements = append(pg.Judgements, NotMeasured(n))
	}
	best := Choose(pg.Judgements)
	pg.Verdicts = []Verdict{
		lockVerdict(pg.Judgements, best, in.Req),
		ttlVerdict(ev.Tuning, p),
		retryVerdict(pg.Judgements, best),
		capacityVerdict(pg.Judgements, best, capacity, prof, in.Req),
		incidentVerdict(ev, pg.Judgements, prof),
		fencingVerdict(pg.Judgements),
		redlockVerdict(pg.Judgements, best),
		faultVerdict(pg.Faults),
	}
	return pg
}

func requirementsText(r Requirements) string {
	return fmt.Sprintf("SLO %s on %s (the caller's wait, retries included; a give-up is a failure); at most %s incidents per 10,000 holders; %s correctness",
		sloText(r.SLO), verdict.WaitOp, per10k(r.MaxIncidentRate), r.Correctness)
}

// sloText lists the SLOs as written.
func sloText(slo []results.Assertion) string {
	var out []string
	for _, a := range slo {
		out = append(out, a.Expr)
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

func workText(p Profile) string {
	pauses := "no pauses"
	if p.PauseProb > 0 {
		pauses = fmt.Sprintf("%s of holders pause (p99 %s)", results.FigureText("holders_pausing", p.PauseProb), p.Pause99)
	}
	return fmt.Sprintf("hold p99 %s, %s, demand %s", p.Hold99, pauses, p.DemandText())
}

// usWithRun is a latency citing its run.
func usWithRun(us float64, run string) Part { return num(results.FormatUS(us), run) }

func lockVerdict(js []Judgement, best int, req Requirements) Verdict {
	v := Verdict{Question: "Which lock and topology?"}
	if best < 0 {
		v.Answer = []Part{txt("No candidate is shown to meet both the SLO and %s correctness. ", req.Correctness)}
		for _, j := range js {
			v.Answer = append(v.Answer, txt("%s: %s. ", j.Candidate, j.Why))
			if j.Thin != "" && j.Measured() {
				v.Thin = append(v.Thin, j.Candidate+": "+j.Thin)
			}
		}
		return v
	}
	j := js[best]
	c := j.Cell
	lock, topo, _ := strings.Cut(j.Candidate, "@")
	qualifying, judged := 0, 0
	var unmeasured []string
	for _, o := range js {
		if o.Qualifies {
			qualifying++
		}
		if o.Measured() {
			judged++
		} else {
			unmeasured = append(unmeasured, o.Candidate)
		}
	}
	meet := fmt.Sprintf("%d meet", qualifying)
	if qualifying == 1 {
		meet = "only it meets"
	}
	servers := " servers, "
	if c.Nodes == 1 {
		servers = " server, "
	}
	of := "of the " + results.Count(int64(judged), "candidate") + " measured"
	if len(unmeasured) > 0 {
		of += fmt.Sprintf(" (%s %s: %s)", results.Count(int64(len(unmeasured)), "other was|others were"), verdict.NotMeasured, strings.Join(unmeasured, ", "))
	}
	v.Answer = []Part{txt("Run `%s` on %s: %s, %s the SLO and %s correctness, and it is the cheapest of them (fewest servers, then server commands per acquisition on one backend, else p99): ",
		lock, topo, of, meet, req.Correctness), num(fmt.Sprint(c.Nodes), c.RunID), txt("%s", servers)}
	if c.CommandsPerAcquire != nil {
		v.Answer = append(v.Answer, num(fmt.Sprintf("%.2f", *c.CommandsPerAcquire), c.RunID), txt(" commands per acquisition, "))
	}
	v.Answer = append(v.Answer, txt("%s p99 ", c.Step.LatencyOp), usWithRun(c.Step.P99US, c.RunID), txt(". Correctness: %s.", j.Why))
	if len(unmeasured) > 0 {
		v.Answer = append(v.Answer, txt(" To judge the others, run advise --resume with a longer --budget."))
	}
	for _, o := range js {
		if !o.Qualifies && o.Thin != "" && o.Measured() {
			v.Thin = append(v.Thin, o.Candidate+": "+o.Thin)
		}
	}
	return v
}

func tuneRuns(t Tuning, c *sweep.TuneCell) []string {
	if c == nil {
		return nil
	}
	return c.RunIDs
}

func ttlVerdict(t Tuning, p Plan) Verdict {
	v := Verdict{Question: "Which TTL and renewal interval?"}
	target := p.Input.Req.MaxIncidentRate
	cell := t.Rec.Best
	if cell == nil {
		cell = t.Rec.Closest
	}
	if cell == nil {
		v.Answer = []Part{txt("No TTL cell was measured, so no TTL is recommended; the other experiments ran at TTL %s without renewal.", t.TTL)}
		v.Thin = []string{"run advise --resume with a longer --budget to measure the TTL cells"}
		return v
	}
	runs := tuneRuns(t, cell)
	blocked := "≤ " + cell.TTL + " (no holder crashed: the TTL bounds it)"
	if cell.BlockedSamples > 0 {
		blocked = results.FormatUS(cell.BlockedP99US) + " at p99"
	}
	if t.Proven {
		v.Answer = []Part{txt("TTL %s %s (the shortest-blocking cell whose 95%% bound is within the target): ", cell.TTL, renewWords(cell.RenewEvery)),
			num(fmt.Sprint(cell.Expired), runs...), txt(" of "), num(fmt.Sprint(cell.Acquired), runs...),
			txt(" holders outlived their lease, at most "), num(per10k(cell.UpperBound), runs...), txt(" per 10,000 at 95%% (target %s); a crashed holder blocks its key ", per10k(target)),
			num(blocked, runs...), txt("; "), num(fmt.Sprintf("%.1f", cell.RenewPerS), runs...), txt(" renewals/s.")}
		return v
	}
	v.Answer = []Part{txt("No TTL tried is proven within the target; the closest, TTL %s %s, had ", cell.TTL, renewWords(cell.RenewEvery)),
		num(fmt.Sprint(cell.Expired), runs...), txt(" of "), num(fmt.Sprint(cell.Acquired), runs...),
		txt(" holders outlive their lease (at most "), num(per10k(cell.UpperBound), runs...), txt(" per 10,000 at 95%%, target %s), and the other experiments ran at it.", per10k(target))}
	if more, ok := verdict.MoreSamples(cell.Expired, cell.Acquired, target); ok && cell.Overlaps == 0 {
		v.Thin = append(v.Thin, fmt.Sprintf("TTL %s: about %d more acquisitions would prove it (a longer --budget)", cell.TTL, more))
	} else {
		v.Thin = append(v.Thin, "every TTL tried lets holders outlive their lease more often than the target: a longer TTL (a longer --budget tries longer ones), or a fenced lock")
	}
	if p.TTLCapped {
		v.Thin = append(v.Thin, fmt.Sprintf("your pauses (p99 %s) outlast the longest TTL this budget can judge (%s)", p.Profile.Pause99, p.TTLs[len(p.TTLs)-1]))
	}
	return v
}

func retryVerdict(js []Judgement, best int) Verdict {
	v := Verdict{Question: "Which retry?"}
	j := pick(js, best)
	if j == nil {
		v.Answer = []Part{txt("No candidate was measured at your demand.")}
		return v
	}
	policy, why := RetryAdvice(*j.Cell)
	v.Answer = []Part{txt("Retry %s on %s: ", policy, j.Candidate), num(why, j.Cell.RunID), txt(".")}
	return v
}

// pick is the recommended judgement, or the first measured one.
func pick(js []Judgement, best int) *Judgement {
	if best >= 0 {
		return &js[best]
	}
	for i := range js {
		if js[i].Cell != nil {
			return &js[i]
		}
	}
	return nil
}

func capacityVerdict(js []Judgement, best int, capacity map[string]Cell, prof Profile, req Requirements) Verdict {
	v := Verdict{Question: "Does it carry the demand?"}
	slo := sloText(req.SLO)
	for i, j := range js {
		if j.Cell == nil {
			continue
		}
		c := j.Cell
		mark := ""
		if i == best {
			mark = " (recommended)"
		}
		op := c.Step.LatencyOp
		v.Answer = append(v.Answer, txt("%s%s sustained ", j.Candidate, mark), num(formatRate(c.Step.Throughput), c.RunID),
			txt(" acquisitions/s with %s p99 ", op), usWithRun(c.Step.P99US, c.RunID), txt(" (%s) at your demand of %s", slo, prof.DemandText()))
		if f := c.Step.Failures; f != nil {
			v.Answer = append(v.Answer, txt(" ("), num(f.Text(), c.RunID), txt(")"))
		}
		if k, ok := capacity[j.Candidate]; ok {
			v.Answer = append(v.Answer, txt("; closed loop at %d workers it sustained ", prof.Concurrency), num(formatRate(k.Step.Throughput), k.RunID), txt(" acquisitions/s"))
			if f := k.Step.Failures; f != nil {
				v.Answer = append(v.Answer, txt(" ("), num(f.Text(), k.RunID), txt(")"))
			}
		}
		switch {
		case c.Step.MetSLO:
			v.Answer = append(v.Answer, txt(": %s it. ", verdict.Meets))
		default:
			v.Answer = append(v.Answer, txt(": %s it (%s). ", verdict.Misses, strings.Join(c.Step.Broken, "; ")))
		}
		if l := c.Step.Limit; l != nil {
			v.Answer = append(v.Answer, num(l.Text(), c.RunID), txt(". "))
		}
	}
	if len(v.Answer) == 0 {
		v.Answer = []Part{txt("No candidate was measured at your demand.")}
	}
	return v
}

func incidentVerdict(ev Evidence, js []Judgement, prof Profile) Verdict {
	v := Verdict{Question: "How often does a holder outlive its lease?"}
	for _, j := range js {
		if j.Cell == nil {
			continue
		}
		c := j.Cell
		if !c.Leased {
			// A session or transaction lock has no TTL: "at TTL 500ms" would
			// name a setting the run never had.
			v.Answer = append(v.Answer, txt("%s has no lease to outlive: it holds as long as its session or transaction. ", j.Candidate))
			continue
		}
		ttl := c.TTL
		if ttl == "" {
			ttl = ev.Tuning.TTL
		}
		rate := 0.0
		if c.Acquired > 0 {
			rate = float64(c.Expired) / float64(c.Acquired)
		}
		v.Answer = append(v.Answer, txt("%s at TTL %s: ", j.Candidate, ttl), num(per10k(rate), c.RunID), txt(" of every 10,000 holders outlived their lease (95%% upper bound "),
			num(per10k(verdict.UpperBound(c.Expired, c.Acquired)), c.RunID), txt(", "), num(fmt.Sprint(c.Expired), c.RunID), txt(" of "), num(fmt.Sprint(c.Acquired), c.RunID), txt("). "))
	}
	if prof.PauseProb == 0 {
		v.Answer = append(v.Answer, txt("Your work has no pauses: a holder outlives its lease only if its hold or the lock's latency reaches the TTL."))
	}
	if len(v.Answer) == 0 {
		v.Answer = []Part{txt("No candidate was measured at your demand.")}
	}
	return v
}

func fencingVerdict(js []Judgement) Verdict {
	v := Verdict{Question: "What does fencing prevent?"}
	var stale, refused int64
	for _, j := range js {
		if j.Cell == nil {
			continue
		}
		c := j.Cell
		if c.Fenced {
			refused += c.FencingRejected
			v.Answer = append(v.Answer, txt("Fenced, %s accepted ", j.Candidate), num(fmt.Sprint(c.StaleAccepted), c.RunID), txt(" stale writes and refused "), num(fmt.Sprint(c.FencingRejected), c.RunID), txt(". "))
			continue
		}
		stale += c.StaleAccepted
		if !c.Leased {
			v.Answer = append(v.Answer, txt("Unfenced, %s accepted ", j.Candidate), num(fmt.Sprint(c.StaleAccepted), c.RunID),
				txt(" stale writes; a holder whose session ended while it worked could write stale once another holder wrote. "))
			continue
		}
		v.Answer = append(v.Answer, txt("Unfenced, %s accepted ", j.Candidate), num(fmt.Sprint(c.StaleAccepted), c.RunID),
			txt(" stale writes; each of its "), num(fmt.Sprint(c.Expired), c.RunID), txt(" holders that outlived their lease could write stale once another holder wrote. "))
	}
	switch {
	case len(v.Answer) == 0:
		v.Answer = []Part{txt("No candidate was measured at your demand.")}
	case stale == 0 && refused == 0:
		v.Answer = append(v.Answer, txt("At your work no stale write was attempted, so fencing had nothing to prevent here."))
	}
	return v
}

func redlockVerdict(js []Judgement, best int) Verdict {
	v := Verdict{Question: "Is Redlock worth its cost?"}
	against := pick(js, best)
	if against != nil && isRedlock(against.Candidate) {
		against = nil
		for i := range js {
			if js[i].Cell != nil && !isRedlock(js[i].Candidate) {
				against = &js[i]
				break
			}
		}
	}
	for _, j := range js {
		if j.Cell == nil || !isRedlock(j.Candidate) || against == nil {
			continue
		}
		rc := CompareRedlock(*j.Cell, *against.Cell)
		runs := []string{j.Cell.RunID, against.Cell.RunID}
		v.Answer = append(v.Answer, txt("%s costs ", rc.Redlock))
		if rc.LatencyX != nil {
			v.Answer = append(v.Answer, num(results.RatioText(*rc.LatencyX), runs...), txt(" the p99 "))
		}
		if rc.CommandsX != nil {
			v.Answer = append(v.Answer, txt("and "), num(results.RatioText(*rc.CommandsX), runs...), txt(" the server commands "))
		}
		v.Answer = append(v.Answer, txt("of %s; at your work it had ", rc.Against), num(results.FigureText("per_10k_acquisitions", rc.RedlockPer10k), j.Cell.RunID),
			txt(" incidents (stale writes accepted, unfenced double grants) per 10,000 against "), num(results.FigureText("per_10k_acquisitions", rc.AgainstPer10k), against.Cell.RunID))
		if rc.Difference.Shown && rc.PreventedPer10k > 0 {
			v.Answer = append(v.Answer, txt(", so it prevented "), num(results.FigureText("per_10k_acquisitions", rc.PreventedPer10k), runs...),
				txt(" per 10,000 (%s)", rc.Difference))
		} else {
			v.Answer = append(v.Answer, txt(": %s", rc.Difference))
		}
		if j.Cell.Expired > 0 || against.Cell.Expired > 0 {
			// Strict correctness counts these too: without a fence each is a
			// stale write waiting for another holder's write.
			v.Answer = append(v.Answer, txt("; "), num(fmt.Sprint(j.Cell.Expired), j.Cell.RunID), txt(" of its holders outlived their lease against "),
				num(fmt.Sprint(against.Cell.Expired), against.Cell.RunID))
		}
		if against.Cell.Fenced {
			v.Answer = append(v.Answer, txt(", while %s's fence refused ", rc.Against), num(fmt.Sprint(rc.FencePrevented), against.Cell.RunID), txt(" stale writes that Redlock has no fence to refuse"))
		}
		v.Answer = append(v.Answer, txt(". "))
	}
	if len(v.Answer) == 0 {
		v.Answer = []Part{txt("No Redlock candidate was measured beside another candidate.")}
	}
	return v
}

func faultVerdict(cells []Cell) Verdict {
	v := Verdict{Question: "What happens under the failures that matter?"}
	for _, c := range cells {
		v.Answer = append(v.Answer, txt("%s under %s: ", c.Candidate, c.Fault), num(fmt.Sprint(c.DoubleGrants), c.RunID), txt(" double grants, "),
			num(fmt.Sprint(c.StaleAccepted), c.RunID), txt(" stale writes accepted, "), num(fmt.Sprint(c.FencingRejected), c.RunID), txt(" refused by the fence, in "),
			num(fmt.Sprint(c.Acquired), c.RunID), txt(" acquisitions. "))
		if c.Inconclusive() {
			v.Answer = append(v.Answer, txt("Inconclusive: %s, so it could not have shown a failure. ", c.whyInconclusive()))
		}
	}
	if len(cells) == 0 {
		v.Answer = []Part{txt("No fault experiment was measured.")}
		return v
	}
	v.Thin = append(v.Thin, "each fault ran once: one trial shows whether it can break the lock, not how often; a longer --budget gives each more acquisitions, and lockbench scenario runs repeated trials")
	return v
}
