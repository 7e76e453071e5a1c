package advise

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"strings"
	"time"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/lockbench/lockbench/bench/sweep"
	"github.com/lockbench/lockbench/bench/verdict"
	"github.com/lockbench/lockbench/results"
)

// cite renders a part for the terminal: a number followed by the citation
// marks of its runs, e.g. 18400 [3].
func (p Page) cite(part Part) string {
	if len(part.Runs) == 0 {
		return part.Text
	}
	var marks []string
	seen := map[int]bool{}
	for _, id := range part.Runs {
		if n := p.Ref(id); n > 0 && !seen[n] {
			seen[n] = true
			marks = append(marks, fmt.Sprint(n))
		}
	}
	return part.Text + " [" + strings.Join(marks, ",") + "]"
}

// Sentence renders an answer for the terminal.
func (p Page) Sentence(parts []Part) string {
	var b strings.Builder
	for _, part := range parts {
		b.WriteString(p.cite(part))
	}
	return strings.TrimSpace(b.String())
}

// WriteText prints the page for a terminal: the verdicts (each number
// followed by [n], the experiment whose stored result it rests on), the
// candidates against the rules, the TTL tuning, what is missing, and the
// experiments with their results' ids and configuration.
func WriteText(w io.Writer, p Page) error {
	return results.Wrapping(w, func(w io.Writer) error { return writeText(w, p) })
}

func writeText(w io.Writer, p Page) error {
	fmt.Fprintln(w, p.Title)
	fmt.Fprintf(w, "requirements: %s\nwork: %s\n", p.Requirements, p.Work)
	fmt.Fprintf(w, "experiments: %s in %s of a %s budget%s\n\n", countText(p.Experiments), p.Elapsed.Round(time.Second), p.Budget, interruptedText(p))
	for i, v := range p.Verdicts {
		fmt.Fprintf(w, "%d. %s\n", i+1, v.Question)
		fmt.Fprintln(w, indent(wrap(p.Sentence(v.Answer), 110), "   "))
		for _, t := range v.Thin {
			fmt.Fprintln(w, indent(wrap("too thin: "+t, 110), "   "))
		}
	}
	fmt.Fprintln(w, "\ncandidates (rules: README, advise)")
	if err := candidateTable(w, p); err != nil {
		return err
	}
	if len(p.Tuning.Cells) > 0 {
		fmt.Fprintln(w, "\nTTL × renewal tuning (tune-ttl's table)")
		if err := sweep.WriteTune(w, p.Tuning.Cells, p.Tuning.Rec); err != nil {
			return err
		}
	}
	if len(p.Missing) > 0 || len(p.Left) > 0 {
		fmt.Fprintln(w, "\nmissing (not measured; lockbench advise --resume with the same flags runs only these)")
		for _, m := range append(append([]string(nil), p.Missing...), p.Left...) {
			fmt.Fprintln(w, indent(wrap(m, 110), "  "))
		}
	}
	fmt.Fprintln(w, "\nexperiments ([n] above cites experiment n's stored result; lockbench results show ID prints it)")
	if err := experimentTable(w, p); err != nil {
		return err
	}
	for _, r := range p.Experiments {
		fmt.Fprintln(w, indent(wrap(fmt.Sprintf("[%d] %s", r.N, r.Flags), 110), "  "))
	}
	return nil
}

func countText(rows []Row) string {
	n := 0
	for _, r := range rows {
		if r.Usable() {
			n++
		}
	}
	return fmt.Sprintf("%d of %d measured%s", n, len(rows), reusedText(rows))
}

// reusedText says how many experiments stood on a stored result of the
// same configuration rather than a run of their own: after --resume the
// wall time is only what was left to run, and the page must not read as
// if everything was measured in it.
func reusedText(rows []Row) string {
	n := 0
	for _, r := range rows {
		if r.Status == Reused {
			n++
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d reused: a stored result of the same configuration)", n)
}

func interruptedText(p Page) string {
	if p.Interrupted {
		return " (INTERRUPTED: the advice rests on what was measured; see missing)"
	}
	return ""
}

func indent(s, by string) string {
	return by + strings.ReplaceAll(s, "\n", "\n"+by)
}

// verdictWord is a candidate's verdict in the table.
func verdictWord(j Judgement) string {
	switch {
	case j.Cell == nil:
		return results.NotMeasured
	case j.Qualifies:
		return "qualifies"
	case !j.Safe && !j.MeetsSLO:
		return "no: both"
	case !j.Safe:
		return "no: safety"
	}
	return "no: SLO"
}

func candidateTable(w io.Writer, p Page) error {
	var (
		rate     = results.FigureColumn("throughput.acquired_per_s", "acq/s")
		p99      = results.FigureColumn("time_to_acquire.p99", "p99")
		cmds     = results.FigureColumn("servers.commands_per_acquire", "cmds\n/acq")
		outlived = results.FigureColumn("per_10k_acquisitions", "outlived\n≤/10k")
		stale    = results.FigureColumn("incidents.stale_writes_accepted", "stale\naccepted")
		fenced   = results.FigureColumn("incidents.fencing_rejected", "fence\nrefused")
		doubles  = results.FigureColumn("incidents.double_grants", "double\ngrants")
	)
	t := results.NewTable(w, results.LabelColumn("candidate"), rate, p99, results.LabelColumn("SLO"), cmds, outlived, stale, fenced, doubles,
		results.LabelColumn("verdict"))
	for _, j := range p.Judgements {
		if j.Cell == nil {
			na := results.NotMeasured
			_ = t.Append(j.Candidate, na, na, na, na, na, na, na, na, verdictWord(j))
			continue
		}
		c := j.Cell
		slo := "met"
		if !c.Step.MetSLO {
			slo = "missed"
		}
		_ = t.Append(j.Candidate, rate.Text(c.Step.Throughput), p99.Text(c.Step.P99US), slo, cmds.Opt(c.CommandsPerAcquire),
			outlived.Text(1e4*verdict.UpperBound(c.Expired, c.Acquired)), stale.Text(float64(c.StaleAccepted)), fenced.Text(float64(c.FencingRejected)),
			doubles.Text(float64(c.DoubleGrants)), verdictWord(j))
	}
	t.Configure(func(cfg *tablewriter.Config) { cfg.Row.Alignment.PerColumn = []tw.Align{tw.AlignLeft} })
	return t.Render()
}

func experimentTable(w io.Writer, p Page) error {
	t := results.NewTable(w, results.LabelColumn("#"), results.LabelColumn("experiment"), results.LabelColumn("status"), results.LabelColumn("run"),
		results.LabelColumn("window"), results.LabelColumn("wall")).Configure(func(cfg *tablewriter.Config) {
		cfg.Row.Alignment.PerColumn = []tw.Align{tw.AlignRight, tw.AlignLeft, tw.AlignLeft}
	})
	for _, r := range p.Experiments {
		run := r.RunID
		if run == "" {
			run = results.NotApplicable
		}
		wall := results.NotApplicable
		if r.Wall > 0 {
			wall = r.Wall.Round(100 * time.Millisecond).String()
		}
		_ = t.Append(r.N, wrap(r.Experiment.Name, 36), string(r.Status), run, r.Experiment.Window.String(), wall)
	}
	return t.Render()
}

// WriteJSON prints the page as JSON: every verdict's parts with the run
// ids they cite, the candidates, the tuning, and the experiments.
func WriteJSON(w io.Writer, p Page) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(p)
}

// WriteHTML writes the page as one self-contained HTML file: each number
// links to its run in the experiments list, which gives the run's id, the
// file it is stored in and its configuration.
func WriteHTML(w io.Writer, p Page, resultsDir string) error {
	t, err := template.New("advise").Funcs(template.FuncMap{
		"ref":  p.Ref,
		"file": func(id string) string { return strings.TrimSuffix(resultsDir, "/") + "/" + results.FileName(id) },
		"us":   results.FormatUS,
		"rate": formatRate,
		"bound": func(c *Cell) string {
			return per10k(verdict.UpperBound(c.Expired, c.Acquired))
		},
		"verdict": verdictWord,
		"deref":   results.FigureColumn("servers.commands_per_acquire", "").Opt,
		"renew":   renewWords,
		"figure":  results.FigureText,
		"reused":  reusedText,
	}).Parse(htmlTemplate)
	if err != nil {
		return fmt.Errorf("advise page template: %w", err)
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, p); err != nil {
		return fmt.Errorf("render advise page: %w", err)
	}
	_, err = w.Write(buf.Bytes())
	return err
}

const htmlTemplate = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font: 14px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: #222; margin: 24px auto; max-width: 1100px; padding: 0 16px; }
h1 { font-size: 20px; } h2 { font-size: 17px; margin-top: 28px; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: 8px 0; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: right; vertical-align: top; }
th:first-child, td:first-child { text-align: left; }
td.why { text-align: left; width: 32%; }
td.name { text-align: left; }
td.flags { text-align: left; font: 12px ui-monospace, monospace; overflow-wrap: anywhere; }
a.num { color: #0645ad; text-decoration: none; border-bottom: 1px dotted #0645ad; font-weight: 600; }
sup { color: #777; }
.verdict { margin: 10px 0 14px; } .q { font-weight: 600; }
.thin { color: #8a4b00; } .warn { color: #b00; font-weight: 600; }
.meta { color: #555; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<p class="meta">Requirements: {{.Requirements}}.<br>Work: {{.Work}}.<br>Experiments ran {{.Elapsed}} of a {{.Budget}} budget{{reused .Experiments}}.{{if .Interrupted}} <span class="warn">Interrupted: the advice rests on what was measured; see what is missing.</span>{{end}}</p>
<h2>Advice</h2>
{{range $i, $v := .Verdicts}}<div class="verdict" data-question="{{$i}}"><div class="q">{{$v.Question}}</div>
<div>{{range $v.Answer}}{{if .Runs}}{{$first := index .Runs 0}}<a class="num" href="#run-{{$first}}" title="{{range .Runs}}{{.}} {{end}}">{{.Text}}</a><sup>{{range $k, $id := .Runs}}{{if $k}},{{end}}{{ref $id}}{{end}}</sup>{{else}}{{.Text}}{{end}}{{end}}</div>
{{range $v.Thin}}<div class="thin">Too thin: {{.}}</div>{{end}}</div>
{{end}}
<h2>Candidates</h2>
<table><tr><th>candidate</th><th>acquired/s</th><th>p99</th><th>SLO</th><th>commands/acquire</th><th>outlived ≤ per 10,000 (95%)</th><th>stale accepted</th><th>fence refused</th><th>double grants</th><th>verdict</th><th style="text-align:left">why</th></tr>
{{range .Judgements}}<tr><td>{{.Candidate}}</td>{{if .Cell}}<td><a href="#run-{{.Cell.RunID}}">{{rate .Cell.Step.Throughput}}</a></td><td>{{us .Cell.Step.P99US}}</td><td>{{if .Cell.Step.MetSLO}}met{{else}}missed{{end}}</td><td>{{deref .Cell.CommandsPerAcquire}}</td><td>{{bound .Cell}}</td><td>{{.Cell.StaleAccepted}}</td><td>{{.Cell.FencingRejected}}</td><td>{{.Cell.DoubleGrants}}</td>{{else}}<td>n/a</td><td>n/a</td><td>n/a</td><td>n/a</td><td>n/a</td><td>n/a</td><td>n/a</td><td>n/a</td>{{end}}<td>{{verdict .}}</td><td class="why">{{.Why}}</td></tr>
{{end}}</table>
{{if .Tuning.Cells}}<h2>TTL × renewal</h2>
<table><tr><th>TTL</th><th>renewal</th><th>acquired</th><th>outlived</th><th>≤ per 10,000 (95%)</th><th>renewals/s</th><th>meets</th><th>runs</th></tr>
{{range .Tuning.Cells}}<tr><td>{{.TTL}}</td><td>{{renew .RenewEvery}}</td><td>{{.Acquired}}</td><td>{{.Expired}}</td><td>{{figure "expiry_rate_upper_95" .UpperBound}}</td><td>{{figure "renew_per_s" .RenewPerS}}</td><td>{{if .Meets}}yes{{else}}no{{end}}</td><td>{{range .RunIDs}}<a href="#run-{{.}}">[{{ref .}}]</a> {{end}}</td></tr>
{{end}}</table><p>{{.Tuning.Rec.Why}}</p>{{end}}
{{if or .Missing .Left}}<h2>Missing</h2><ul>{{range .Missing}}<li>{{.}}</li>{{end}}{{range .Left}}<li>{{.}}</li>{{end}}</ul>
<p>lockbench advise --resume with the same flags reuses what was measured and runs only these.</p>{{end}}
<h2>Experiments</h2>
<table><tr><th>#</th><th>experiment</th><th>status</th><th>run (stored result)</th><th>window</th><th>wall</th><th>configuration</th></tr>
{{range .Experiments}}<tr{{if .RunID}} id="run-{{.RunID}}"{{end}}><td>{{.N}}</td><td class="name">{{.Experiment.Name}}<br><span class="meta">{{.Experiment.Why}}</span></td><td>{{.Status}}{{if .Detail}}<br><span class="meta">{{.Detail}}</span>{{end}}</td><td>{{if .RunID}}<a href="{{file .RunID}}">{{.RunID}}</a>{{else}}-{{end}}</td><td>{{.Experiment.Window}}</td><td>{{if .Wall}}{{.Wall}}{{else}}-{{end}}</td><td class="flags">{{.Flags}}</td></tr>
{{end}}</table>
</body>
</html>
`
