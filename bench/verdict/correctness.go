package verdict

import (
	"fmt"

	"github.com/lockbench/lockbench/results"
)

// The correctness requirements.
const (
	// Strict: a stale write accepted is unacceptable.
	Strict = "strict"
	// Bounded: a rare incident is tolerable, up to the target rate.
	Bounded = "bounded"
)

// Safety is what a correctness verdict reads of one run.
type Safety struct {
	// Acquired is acquisitions: the samples.
	Acquired int64 `json:"acquired"`
	// Fenced: the resource checks the lock's fencing tokens and refuses a
	// stale holder's write.
	Fenced bool `json:"fenced"`
	// Expired is holders whose work outlived their lease.
	Expired int64 `json:"expired"`
	// StaleAccepted, FencingRejected and DoubleGrants are the resource's
	// and the service's events.
	StaleAccepted   int64 `json:"stale_writes_accepted"`
	FencingRejected int64 `json:"fencing_rejected"`
	DoubleGrants    int64 `json:"double_grants"`
}

// Incidents are the unsafe outcomes: stale writes accepted, and double
// grants where no fence guarded the resource. A stale write the fence
// refused is not an incident: that refusal is what fencing is for.
func (s Safety) Incidents() int64 {
	if s.Fenced {
		return s.StaleAccepted
	}
	return s.StaleAccepted + s.DoubleGrants
}

// Decision is a verdict word with its reason and, when the word is TooThin,
// what would decide it.
type Decision struct {
	Word Word   `json:"word"`
	Why  string `json:"why"`
	Thin string `json:"thin,omitempty"`
}

// Correctness judges a run's safety against a requirement (Strict or
// Bounded) and a target rate:
//
//   - nothing acquired: NotMeasured;
//   - strict: any incident Fails; a fenced lock is Safe; otherwise the
//     holders that outlived their lease (each a stale write without a fence)
//     are held to the target by Rate;
//   - bounded: whatever strict finds Safe is Safe (so the looser requirement
//     never rejects what the stricter accepts); otherwise incidents are held
//     to the target by Rate.
func Correctness(s Safety, requirement string, target float64) Decision {
	if s.Acquired == 0 {
		return Decision{Word: NotMeasured, Why: "it acquired no lock, so nothing about it is proven", Thin: "run it again; check that its servers answer"}
	}
	strict := strictDecision(s, target)
	if requirement == Strict || strict.Word == Safe {
		return strict
	}
	return Rate(s.Incidents(), s.Acquired, target, "incidents (stale writes accepted, unfenced double grants)")
}

func strictDecision(s Safety, target float64) Decision {
	switch {
	case s.Incidents() > 0:
		return Decision{Word: Fails, Why: fmt.Sprintf("%d stale writes accepted and %d double grants in %d acquisitions; strict correctness allows none",
			s.StaleAccepted, s.DoubleGrants, s.Acquired)}
	case s.Fenced:
		return Decision{Word: Safe, Why: fmt.Sprintf("fenced: no stale write accepted in %d acquisitions, %d refused by the fence", s.Acquired, s.FencingRejected)}
	}
	return Rate(s.Expired, s.Acquired, target, "holders outliving their lease (each a stale write without a fence)")
}

// Rate judges k events in n samples against a target rate: Safe when the
// 95% upper bound is within it; Fails when the 95% lower bound is above it
// (no number of further samples would bring it within); TooThin otherwise,
// saying how many more samples would prove it where the observed rate is
// below the target.
func Rate(k, n int64, target float64, what string) Decision {
	up, low := UpperBound(k, n), LowerBound(k, n)
	d := Decision{Why: fmt.Sprintf("%d of %d %s: at most %s per 10,000 at 95%% (target %s)", k, n, what, Per10k(up), Per10k(target))}
	switch {
	case up <= target:
		d.Word = Safe
	case low > target:
		d.Word = Fails
		d.Why = fmt.Sprintf("%d of %d %s: at least %s per 10,000 at 95%%, above the target %s", k, n, what, Per10k(low), Per10k(target))
	default:
		d.Word = TooThin
		if more, ok := MoreSamples(k, n, target); ok {
			d.Thin = fmt.Sprintf("too few samples to prove the target: about %d more acquisitions would", more)
		} else {
			d.Thin = "its observed rate is at or above the target: more acquisitions would more likely show it fails than prove it"
		}
	}
	return d
}

// Per10k renders a rate per 10,000 at the precision of results'
// per_10k_acquisitions, as every table prints it.
func Per10k(rate float64) string { return results.FigureText("per_10k_acquisitions", rate*1e4) }
