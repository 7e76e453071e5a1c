package check

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// Limits of the text report: the keys listed, and the violations per key.
const (
	listKeys       = 20
	listViolations = 3
)

// Render writes the report as text: what was checked, the counts per cause,
// the verdict, and the failing keys with the events that make them fail.
func (r *Report) Render(w io.Writer) {
	h := r.Header
	fencing := "unfenced"
	if h.Fencing {
		fencing = "fenced"
	}
	fmt.Fprintf(w, "run       %s, generator(s) %d, lock %s (%s), ttl %v, resource %s\n", h.RunID, max(1, h.Generators), h.Lock, fencing,
		time.Duration(h.TTLNS), h.Resource)
	fmt.Fprintf(w, "model     lease lock per key, clock-drift allowance %v; %d key(s), %d resource event(s); linearizability: %s\n",
		r.Drift, r.CheckedKeys, r.CheckedEvents, r.Porcupine)
	if !r.Complete {
		fmt.Fprintln(w, "warning   the history has no trailer: the run was cut short, its last events may be missing")
	}
	fmt.Fprintf(w, "\n%-24s %8s %8s\n", "", "window", "outside")
	row := func(name string, in, out int64, showOut bool) {
		o := ""
		if showOut {
			o = fmt.Sprint(out)
		}
		fmt.Fprintf(w, "%-24s %8d %8s\n", name, in, o)
	}
	row("double grants", r.Counts.DoubleGrants, r.Outside.DoubleGrants, true)
	row("overruns", r.Counts.Overruns, r.Outside.Overruns, true)
	row("stale writes accepted", r.Counts.StaleAccepted, r.Outside.StaleAccepted, true)
	row("stale writes rejected", r.Counts.FencingRejected, 0, false)
	row("possible double grants", r.Counts.Possible, r.Outside.Possible, true)
	row("writes after the lease", r.Counts.LateWrites, 0, false)
	fmt.Fprintf(w, "\nverdict   %s\n", r.verdict())
	if r.Unsafe() && len(r.Unknown) > 0 {
		fmt.Fprintf(w, "unknown   the linearizability search ran out of its budget (%v per key) on %d key(s): %s\n", r.Timeout, len(r.Unknown), keyList(r.Unknown))
	}
	r.renderKeys(w)
}

// Word is the check's verdict in one word: unsafe, unknown (not unsafe,
// but a key's linearizability search ran out of its budget) or safe.
func (r *Report) Word() string {
	switch {
	case r.Unsafe():
		return "unsafe"
	case r.Undecided():
		return "unknown"
	}
	return "safe"
}

// verdict says whether the window was safe and, if not, which cause broke it.
func (r *Report) verdict() string {
	c := r.Counts
	if r.Undecided() {
		return fmt.Sprintf("UNKNOWN: the replay found nothing unsafe, but the linearizability search ran out of its budget (%v per key) on %d key(s): %s; "+
			"a longer --timeout decides them", r.Timeout, len(r.Unknown), keyList(r.Unknown))
	}
	if !r.Unsafe() {
		if c.Overruns > 0 {
			return fmt.Sprintf("SAFE for the resource: %d overrun(s) (holders worked past their leases), but fencing rejected %d stale write(s) and accepted none",
				c.Overruns, c.FencingRejected)
		}
		if c.FencingRejected > 0 {
			return fmt.Sprintf("SAFE: no two holders inside at once, no stale write accepted; fencing rejected %d stale write(s)", c.FencingRejected)
		}
		return "SAFE: no two holders inside at once, no stale write accepted"
	}
	var why []string
	if c.DoubleGrants > 0 {
		why = append(why, fmt.Sprintf("%d double grant(s): the lock granted a key whose lease was still valid (the lock is broken; a longer TTL does not help)", c.DoubleGrants))
	}
	if c.Overruns > 0 {
		fix := "TTL, renewal or fencing is the fix"
		if r.Header.Fencing {
			fix = "fencing stopped their writes but not what else they did"
		}
		why = append(why, fmt.Sprintf("%d overrun(s): holders worked past their own leases (%s)", c.Overruns, fix))
	}
	if c.StaleAccepted > 0 {
		why = append(why, fmt.Sprintf("%d stale write(s) accepted: silent corruption", c.StaleAccepted))
	}
	return "UNSAFE: " + strings.Join(why, "; ")
}

// keyList names keys, the first listKeys of them.
func keyList(keys []Key) string {
	var names []string
	for i, k := range keys {
		if i == listKeys {
			names = append(names, fmt.Sprintf("… and %d more", len(keys)-listKeys))
			break
		}
		names = append(names, k.String())
	}
	return strings.Join(names, ", ")
}

func (r *Report) renderKeys(w io.Writer) {
	if len(r.Keys) == 0 {
		return
	}
	r.renderByCalls(w)
	fmt.Fprintf(w, "\nfailing keys (%d of %d):\n", len(r.Keys), r.CheckedKeys)
	for i, kr := range r.Keys {
		if i == listKeys {
			fmt.Fprintf(w, "  … and %d more key(s)\n", len(r.Keys)-listKeys)
			break
		}
		c := kr.Counts
		fmt.Fprintf(w, "  %s: %d double grant(s), %d overrun(s), %d stale write(s) accepted, %d rejected in the window; linearizability: %s\n",
			kr.Key, c.DoubleGrants, c.Overruns, c.StaleAccepted, c.FencingRejected, kr.Porcupine)
		for j, v := range kr.Violations {
			if j == listViolations {
				fmt.Fprintf(w, "    … and %d more violation(s)\n", kr.ViolationsFound-listViolations)
				break
			}
			where := ""
			if !v.InWindow {
				where = " (outside the window)"
			}
			by, label := "", "inside"
			if v.ByCalls {
				by, label = " (by the lock's calls)", "calls"
			}
			fmt.Fprintf(w, "    %s%s%s: %s\n", v.Cause, by, where, describe(v.Event))
			for _, in := range v.Inside {
				fmt.Fprintf(w, "      %s: %s\n", label, describe(in))
			}
		}
		for j, d := range kr.Disagreements {
			if j == listViolations {
				fmt.Fprintf(w, "    … and %d more disagreement(s)\n", kr.DisagreementsFound-listViolations)
				break
			}
			if d.CallsValid != 0 {
				fmt.Fprintf(w, "    DISAGREEMENT: recorded valid to %s, the holder's own calls say %s: %s\n", fmtNS(d.Event.Valid),
					fmtNS(d.CallsValid), describe(d.Event))
				continue
			}
			fmt.Fprintf(w, "    DISAGREEMENT: the run recorded %s, the model says %s: %s\n", d.Recorded, d.Model, describe(d.Event))
		}
	}
}

// maxVisualized bounds the segments drawn: each is up to segmentOps events.
const maxVisualized = 40

// Visualize writes Porcupine's visualization of the violating keys (their
// illegal segments), with the run's faults and window as annotations.
func (r *Report) Visualize(w io.Writer) error {
	if r.illegalFound == 0 {
		return errors.New("no key violates the model: nothing to visualize")
	}
	if len(r.illegal) == 0 {
		return errors.New("the check did not keep the violating keys' events: check with Options.Visualize")
	}
	segs := r.illegal[:min(len(r.illegal), maxVisualized)]
	var all []porcupine.Operation
	for i, s := range segs {
		for _, op := range s.ops {
			op.Metadata = i
			all = append(all, op)
		}
	}
	m := r.model
	m.Partition = func(ops []porcupine.Operation) [][]porcupine.Operation {
		parts := make([][]porcupine.Operation, len(segs))
		for _, op := range ops {
			i := op.Metadata.(int)
			parts[i] = append(parts[i], op)
		}
		return parts
	}
	m.DescribeOperationMetadata = func(md any) string {
		if i, ok := md.(int); ok {
			return segs[i].key.Key.String()
		}
		return ""
	}
	_, info := porcupine.CheckOperationsVerbose(m, all, 0)
	var notes []porcupine.Annotation
	for _, f := range r.Faults {
		d := f.Spec
		if f.Node != "" {
			d += " on " + f.Node
		}
		notes = append(notes, porcupine.Annotation{Tag: "faults", Start: f.StartNS, End: max(f.StartNS, f.EndNS), Description: d,
			BackgroundColor: "#f8c4c4"})
	}
	if r.Trailer != nil {
		notes = append(notes, porcupine.Annotation{Tag: "run", Start: r.Trailer.WindowStartNS, Description: "window opens"},
			porcupine.Annotation{Tag: "run", Start: r.Trailer.WindowEndNS, Description: "window closes"})
	}
	info.AddAnnotations(notes)
	if err := porcupine.Visualize(m, info, w); err != nil {
		return fmt.Errorf("visualize: %w", err)
	}
	return nil
}

// Illegal is how many segments Porcupine found illegal.
func (r *Report) Illegal() int { return r.illegalFound }

// listByCalls bounds the double grants listed that only the lock's calls show.
const listByCalls = 20

// renderByCalls lists the double grants that only the lock's calls show:
// the resource saw no overlap (the earlier holder had left, or was counted
// as overrunning), yet the acquire returned inside another token's lease.
func (r *Report) renderByCalls(w io.Writer) {
	var lines []string
	n := 0
	for _, kr := range r.Keys {
		n += kr.byCallsFound
		for _, v := range kr.byCalls {
			if len(lines) < listByCalls {
				acq, other := v.Event, v.Event
				if len(v.Inside) > 0 {
					acq = v.Inside[0]
				}
				if len(v.Inside) > 1 {
					other = v.Inside[1]
				}
				lines = append(lines, fmt.Sprintf("  %s: %s\n    inside the lease of %s", kr.Key, describe(acq), describe(other)))
			}
		}
	}
	if n == 0 {
		return
	}
	fmt.Fprintf(w, "\ndouble grants only the lock's calls show (%d; the resource saw no overlap, or only an overrun):\n", n)
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
	if n > len(lines) {
		fmt.Fprintf(w, "  … and %d more\n", n-len(lines))
	}
}
