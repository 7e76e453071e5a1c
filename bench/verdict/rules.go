// Package verdict is lockbench's rulebook: every word that decides —
// meets, misses, recommended, available, safe, fails, too thin, not
// measured, inconclusive, k of n — is earned here and nowhere else. run, capacity, lock-cost,
// redlock-cost, tune-ttl, sweep, scenario and advise call these rules, and
// the README's list of them is generated from Rules (see Markdown).
package verdict

import (
	"strings"

	"github.com/lockbench/lockbench/results"
)

// Word is a word that decides.
type Word string

// The deciding words.
const (
	Meets       Word = "meets"
	Misses      Word = "misses"
	Safe        Word = "safe"
	Fails       Word = "fails"
	TooThin     Word = "too thin"
	NotMeasured Word = "not measured"
	Recommended Word = "recommended"
	Available   Word = "available"
	Bottleneck  Word = "limit"
	// Inconclusive marks a trial that could not have failed.
	Inconclusive Word = "inconclusive"
	// KOfN is a count of trials that violated, stated with what it bounds.
	KOfN Word = "k of n"
	// UndecidedCount is a count over trials that earns neither harm nor safety.
	UndecidedCount Word = UndecidedWord
	// DifferenceShown is a claim that two rates differ.
	DifferenceShown Word = "difference shown"
)

// Rule is one word and the rule that earns it.
type Rule struct {
	Word Word
	Rule string
}

// Rules are the rulebook, in the order the README states them.
func Rules() []Rule {
	busy := pct(results.SaturatedShare)
	return []Rule{
		{Meets, "every `--slo` held, a bare percentile (`p99<10ms`) read on `time_to_acquire`: the caller's wait from the first try " +
			"to the grant, retries and waits included (open loop: from the intended start), so a blocking and a retrying acquire " +
			"compare like for like; a give-up counts as a failure at the wait limit, and a percentile that falls among the " +
			"give-ups is broken, with their count; the tries did not mostly fail (failed tries over half, or more give-ups than " +
			"grants, meet nothing); open loop, at least 95% of the offered requests served and none dropped already late. " +
			"The output names the latency it judged; one try's latency (`acquire`) stays a figure of its own."},
		{Misses, "any of those did not hold; the first broken rule is named, with the failures beside the rate " +
			"(tries failed by kind, give-ups, and in open loop served, late and dropped)."},
		{Safe, "strict: no stale write accepted and no unfenced double grant, and either the lock is fenced or the 95% upper " +
			"bound on holders outliving their lease is within `--max-incident-rate`; bounded: whatever strict finds safe, " +
			"else the 95% upper bound on incidents (stale writes accepted, unfenced double grants) is within the target. " +
			"A stale write refused by fencing is not an incident."},
		{Fails, "strict: any incident; either requirement: the rate's 95% lower bound is above the target, " +
			"which no number of further samples would change."},
		{TooThin, "neither bound decides: the upper bound is above the target and the lower bound is not; the output says " +
			"how many more acquisitions would prove it where the observed rate is below the target."},
		{NotMeasured, "the run did not happen or acquired nothing: not counted among the candidates judged, never a pass."},
		{Recommended, "the cheapest measured candidate that meets the SLO and is safe: fewest servers, then fewest server " +
			"commands per acquisition on one backend, else the lowest `time_to_acquire` p99. tune-ttl's cell: the shortest " +
			"blocking among the safe cells; where the chosen cell's 95% interval overlaps another's, the tie-break " +
			"(shorter blocking, then fewer renewal commands, then the simpler: renewal off) decides and the output says so; " +
			"a renewal interval under which no renewal fired counts as off."},
		{Available, "under a fault: the share of the fault's span (and of the window) whose seconds had at least one " +
			"acquisition, with the longest gap without one; a stalled attempt is not available."},
		{Bottleneck, "one rule, in this order: contention-bound (most tries found their key held, a Redlock try that lost " +
			"a split vote counted as held, or tries found keys held while acquisitions/s × mean hold kept 80% of the keys in use " +
			"held: however many keys there are, the hold on the busy ones is the limit; next: shard the keys or shorten the hold); server-bound (the busiest server's thread busy over " + busy + " of the window; next: more " +
			"servers or Cluster); generator-bound (the generator over " + busy + " of its CPUs; next: more generators or " +
			"`--pipeline auto`); host-bound (the generator's host over " + busy + " busy, or with the servers it shares it; " +
			"next: move the generator); else none."},
		{Inconclusive, "a trial that acquired nothing in its window, or whose decisive fault fired with nobody at risk " +
			"(no holder inside, exposure recorded as the fault fired), or whose exposure was not recorded: it could not " +
			"have failed, so it is never counted as a pass. A trial that violated is conclusive whatever its exposure."},
		{KOfN, "one rule for every count over trials (renewal-check's cells, scenario's variants): a word of harm " +
			"(`overran`, `fenced`, `violated`, `resurrected`, `recreated`, `adds`) needs at least one conclusive trial that showed " +
			"it, and is shown with the exact (Clopper–Pearson) 95% interval on its share of trials; a word of safety (`caught`, " +
			"`kept`, `safe`, `deleted`, `refused`, `resets`) needs none, and the 95% upper bound on that share within " +
			"`--safety-level` (default 10%: at least 29 conclusive trials); no interval that spans 0%–100% is printed as a " +
			"figure. A mitigated variant that granted nothing after its fault says it was safe only by being unavailable."},
		{UndecidedCount, "a count over trials that neither word earns: no trial showed the harm, but too few bound it within the " +
			"level; shown as `undecided k/n (≤U%)` with how many more conclusive trials without it would decide, which " +
			"`--budget` spends its time on. The same command run twice gives words that agree, or one side undecided."},
		{DifferenceShown, "two locks or variants are set apart on a rate only where an exact test shows it at 95% (Fisher's for " +
			"shares of trials, the conditional binomial for counts per failover); otherwise the output says `no difference shown`."},
	}
}

// Markdown is the rulebook as the README states it, between
// <!-- rules:verdict --> and <!-- /rules:verdict -->.
func Markdown() string {
	var b strings.Builder
	for _, r := range Rules() {
		line := "-"
		for _, word := range strings.Fields("*" + string(r.Word) + "*: " + r.Rule) {
			if len(line)+1+len(word) > markdownWidth {
				b.WriteString(line + "\n")
				line = " "
			}
			line += " " + word
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}

// markdownWidth is the README's line width.
const markdownWidth = 90
