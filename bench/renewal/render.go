package renewal

import (
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"path/filepath"
	"strings"

	"github.com/lockbench/lockbench/bench/verdict"
	"github.com/lockbench/lockbench/results"
)

// cellWidth is a matrix cell's width: nine cases and a lock name fit
// within 120 columns.
const cellWidth = 11

// matrixWords are the words of cells too long for cellWidth.
var matrixWords = map[string]string{VerdictNotMeasured: "unmeasured", Inconclusive.String(): "no exposure"}

// short fits a cell's word and count in cellWidth: the count loses its
// space, then its denominator (the paragraph below has both).
func (c Cell) short() string {
	if w, ok := matrixWords[c.Verdict]; ok {
		return w
	}
	s := c.Short()
	if c.Undecided() && len([]rune(s)) > cellWidth {
		// The paragraph below gives its count and bound.
		return verdict.UndecidedWord
	}
	if len(s) > cellWidth {
		s = strings.Replace(s, " ", "", 1)
	}
	if len(s) > cellWidth {
		s, _, _ = strings.Cut(c.Short(), "/")
	}
	return s
}

// WriteMatrix prints the matrix: a lock a row, a case a column (numbered,
// named in the legend above), then one paragraph per measured cell.
func WriteMatrix(w io.Writer, m Matrix) error {
	return results.Wrapping(w, func(w io.Writer) error { return writeMatrixText(w, m) })
}

func writeMatrixText(w io.Writer, m Matrix) error {
	fmt.Fprintln(w, "renewal-check: does the holder learn its lease is gone before its next write?")
	for i, c := range m.Cases {
		fmt.Fprintf(w, "  %d %s: %s\n", i+1, c.Name, c.Title)
	}
	fmt.Fprintln(w, "cells: caught (told and stopped before writing), overran (wrote after losing the lease), fenced (wrote late, "+
		"the fencing token stopped it), kept (the lock kept the lease), no exposure (no lease held and lost when the fault "+
		"hit: inconclusive), undecided (no trial wrote after losing its lease, but too few to bound that under "+
		verdict.LevelText(m.Level)+" of trials at 95%: the paragraph says how many more would), "+unmeasuredWord(m)+
		"n/a, absent (reasons below); k/n = trials with that worst outcome / trials "+
		"with exposure; probes of the lock, no run: "+probeWords(m))
	fmt.Fprintln(w)
	var line strings.Builder
	line.WriteString(fmt.Sprintf("%-10s", "lock"))
	for i := range m.Cases {
		line.WriteString(fmt.Sprintf(" %-*s", cellWidth, fmt.Sprint(i+1)))
	}
	fmt.Fprintln(w, strings.TrimRight(line.String(), " "))
	for j, l := range m.Locks {
		line.Reset()
		line.WriteString(fmt.Sprintf("%-10s", l.Name))
		for i := range m.Cases {
			line.WriteString(fmt.Sprintf(" %-*s", cellWidth, m.Cell(i, j).short()))
		}
		fmt.Fprintln(w, strings.TrimRight(line.String(), " "))
	}
	fmt.Fprintln(w)
	for i, c := range m.Cases {
		for j := range m.Locks {
			if cell := m.Cell(i, j); len(cell.Trials) > 0 {
				fmt.Fprintln(w, detail(c.on(m.Locks[j]), cell))
			}
		}
	}
	for i := range m.Cases {
		for _, line := range differences(m, i) {
			fmt.Fprintln(w, line)
		}
	}
	for _, c := range m.Cases {
		switch {
		case c.NotApplicable != "":
			fmt.Fprintf(w, "%s: n/a on every lock: %s\n", c.Name, c.NotApplicable)
		case c.NotMeasured != "":
			fmt.Fprintf(w, "%s: not measured: %s\n", c.Name, c.NotMeasured)
		}
	}
	for j, l := range m.Locks {
		if l.Absent != "" {
			fmt.Fprintf(w, "%s: absent: %s\n", l.Name, l.Absent)
			continue
		}
		for i, c := range m.Cases {
			if why := lockOnlyReason(c, m.Cell(i, j)); why != "" {
				fmt.Fprintf(w, "%s on %s: %s: %s\n", c.Name, l.Name, m.Cell(i, j).Verdict, why)
			}
		}
	}
	return nil
}

// differences are case i's sentences setting two locks apart: each lock
// whose holders wrote after losing the lease against each that was not seen
// to, with Fisher's exact test at 95%: a difference is said only where the
// test shows it.
func differences(m Matrix, i int) []string {
	var out []string
	c := m.Cases[i]
	for a := range m.Locks {
		ca := m.Cell(i, a)
		if ca.Decision.Class != verdict.Harm {
			continue
		}
		for b := range m.Locks {
			cb := m.Cell(i, b)
			if cb.Decision.Class != verdict.SafeShown && cb.Decision.Class != verdict.Undecided {
				continue
			}
			d := verdict.DifferTrials(ca.Decision.Harm, ca.Decision.N, cb.Decision.Harm, cb.Decision.N)
			out = append(out, fmt.Sprintf("%s: %s on %s (%d/%d) against %s on %s (%d/%d): %s", c.Name, ca.Verdict, ca.Lock,
				ca.Decision.Harm, ca.Decision.N, cb.Short(), cb.Lock, cb.Decision.Harm, cb.Decision.N, d))
		}
	}
	return out
}

// lockOnlyReason is why a cell has no runs when the reason is its lock's
// alone (zk's session has no analogue of the case), or "" when the
// case's own line says it.
func lockOnlyReason(c Case, cell Cell) string {
	if cell.Why == "" || cell.Why == c.NotApplicable || cell.Why == c.NotMeasured {
		return ""
	}
	return cell.Why
}

// unmeasuredWord is the legend's word for cases not measured yet, if the
// matrix has any.
func unmeasuredWord(m Matrix) string {
	for _, c := range m.Cases {
		if c.NotMeasured != "" {
			return "unmeasured, "
		}
	}
	return ""
}

// probeWords names the probes' two words, case by case: "resets or adds
// (adds-or-resets), …".
func probeWords(m Matrix) string {
	var words []string
	for _, c := range m.Cases {
		if c.probe != nil {
			words = append(words, fmt.Sprintf("%s or %s (%s)", c.word(Caught), c.word(Overran), c.Name))
		}
	}
	return strings.Join(words, ", ")
}

// detail is one measured cell's paragraph: its counts, bounds, delays,
// fencing, check and runs.
func detail(c Case, cell Cell) string {
	var b strings.Builder
	head := cell.Verdict
	if cell.Undecided() {
		head = cell.Short()
	}
	fmt.Fprintf(&b, "%s on %s: %s", cell.Case, cell.Lock, head)
	exposure := 0
	for _, t := range cell.Trials {
		exposure += t.Exposure
	}
	fmt.Fprintf(&b, "; %d of %d trials had exposure (%d leases)", cell.Conclusive, len(cell.Trials), exposure)
	if cell.Conclusive > 0 {
		fmt.Fprintf(&b, "; by outcome %s", outcomes(c, cell))
		harm := "wrote after losing the lease"
		if c.probe != nil {
			harm = c.word(Overran)
		}
		fmt.Fprintf(&b, "; %s", cell.Decision.Explain(harm, "of trials"))
	}
	if d := cell.Delays; d != nil {
		fmt.Fprintf(&b, "; told %.0f/%.0f/%.0f ms after the loss (min/p50/max of %d)", d.Min, d.P50, d.Max, d.N)
	}
	if c.probe != nil {
		// A probe has no run, history or write: what each trial saw is
		// its evidence.
		var seen []string
		for _, t := range cell.Trials {
			seen = append(seen, t.Observed)
		}
		fmt.Fprintf(&b, "; probed on the lock, no run: %s", strings.Join(seen, "; "))
	} else {
		fmt.Fprintf(&b, "; stale writes: %d stopped by fencing, %d accepted", cell.FencingRejected, cell.StaleAccepted)
		fmt.Fprintf(&b, "; check %s; runs", cell.Check)
		for _, r := range cell.Runs {
			fmt.Fprintf(&b, " %s", r.ID)
		}
	}
	if cell.Verdict == c.word(Overran) || cell.Verdict == c.word(Fenced) {
		fmt.Fprintf(&b, "; what to do: %s", c.Advice)
	}
	return b.String()
}

// outcomes lists a cell's trial counts by outcome, gravest first, in
// c's words.
func outcomes(c Case, cell Cell) string {
	var parts []string
	for o := Overran; o > Inconclusive; o-- {
		if n := cell.Outcomes[c.word(o)]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", c.word(o), n))
		}
	}
	return strings.Join(parts, ", ")
}

// matrixJSON is the matrix as --format json gives it.
type matrixJSON struct {
	Cases []caseJSON `json:"cases"`
	Locks []lockJSON `json:"locks"`
	// Cells are by case, then lock, as in cases and locks.
	Cells [][]Cell `json:"cells"`
}

type caseJSON struct {
	Name          string `json:"name"`
	Title         string `json:"title"`
	Reproduces    string `json:"reproduces"`
	Advice        string `json:"advice"`
	NotMeasured   string `json:"not_measured,omitempty"`
	NotApplicable string `json:"not_applicable,omitempty"`
}

type lockJSON struct {
	Name     string  `json:"name"`
	Topology string  `json:"topology,omitempty"`
	TTLS     float64 `json:"ttl_s,omitempty"`
	Fencing  bool    `json:"fencing"`
	Absent   string  `json:"absent,omitempty"`
}

func toJSON(m Matrix) matrixJSON {
	out := matrixJSON{Cells: m.Cells}
	for _, c := range m.Cases {
		out.Cases = append(out.Cases, caseJSON{Name: c.Name, Title: c.Title, Reproduces: c.Reproduces, Advice: c.Advice,
			NotMeasured: c.NotMeasured, NotApplicable: c.NotApplicable})
	}
	for _, l := range m.Locks {
		out.Locks = append(out.Locks, lockJSON{Name: l.Name, Topology: l.Topology, TTLS: l.TTL.Seconds(), Fencing: l.Fencing, Absent: l.Absent})
	}
	return out
}

// WriteMatrixJSON prints m as JSON.
func WriteMatrixJSON(w io.Writer, m Matrix) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(toJSON(m))
}

// WriteMatrixHTML writes m as one page: the matrix, each cell linking to
// its paragraph, and each paragraph to its runs' result files and
// histories, relative to dir (where the page is written).
func WriteMatrixHTML(w io.Writer, m Matrix, outDir, pageDir string) error {
	type link struct{ ID, Result, History string }
	type cellView struct {
		Short, Verdict, Anchor, Detail, Why string
		Runs                                []link
	}
	type rowView struct {
		Lock  string
		Cells []cellView
	}
	rel := func(p string) string {
		if r, err := filepath.Rel(pageDir, p); err == nil {
			return filepath.ToSlash(r)
		}
		return p
	}
	var rows []rowView
	var details []cellView
	for j, l := range m.Locks {
		row := rowView{Lock: l.Name}
		for i, c := range m.Cases {
			cell := m.Cell(i, j)
			v := cellView{Short: cell.Short(), Verdict: strings.ReplaceAll(cell.Verdict, " ", "-"), Why: cell.Why,
				Anchor: c.Name + "--" + l.Name}
			if len(cell.Trials) > 0 {
				v.Detail = detail(c.on(l), cell)
				for _, r := range cell.Runs {
					v.Runs = append(v.Runs, link{ID: r.ID, Result: rel(filepath.Join(outDir, r.ID+".json")), History: rel(r.History)})
				}
				details = append(details, v)
			}
			row.Cells = append(row.Cells, v)
		}
		rows = append(rows, row)
	}
	return htmlPage.Execute(w, map[string]any{"Cases": toJSON(m).Cases, "Rows": rows, "Details": details})
}

var htmlPage = template.Must(template.New("renewal").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>lockbench renewal-check</title>
<style>
body{font-family:sans-serif;max-width:70em;margin:1em auto}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.3em .5em;font-size:90%}
.caught,.resets,.refused{background:#dfd}.overran,.adds,.recreated{background:#fcc}.fenced{background:#ffd}.kept{background:#def}
.n\/a,.not-measured,.absent,.inconclusive{color:#888}
</style></head><body>
<h1>renewal-check</h1>
<p>Does the holder learn its lease is gone before its next write? Each cell links to its runs and histories
(<code>lockbench check HISTORY</code> re-checks one).</p>
<table><tr><th>lock</th>{{range .Cases}}<th title="{{.Title}}">{{.Name}}</th>{{end}}</tr>
{{range .Rows}}<tr><th>{{.Lock}}</th>{{range .Cells}}<td class="{{.Verdict}}"{{if .Why}} title="{{.Why}}"{{end}}>{{if .Detail}}<a href="#{{.Anchor}}">{{.Short}}</a>{{else}}{{.Short}}{{end}}</td>{{end}}</tr>
{{end}}</table>
<h2>Cases</h2><dl>{{range .Cases}}<dt>{{.Name}}</dt><dd>{{.Title}}. Reproduces {{.Reproduces}}. If a cell fails: {{.Advice}}.{{if .NotMeasured}} Not measured: {{.NotMeasured}}.{{end}}{{if .NotApplicable}} Not applicable: {{.NotApplicable}}.{{end}}</dd>{{end}}</dl>
<h2>Cells</h2>
{{range .Details}}<p id="{{.Anchor}}">{{.Detail}}<br>{{range .Runs}}<a href="{{.Result}}">{{.ID}}</a> (<a href="{{.History}}">history</a>) {{end}}</p>
{{end}}</body></html>
`))
