package results

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Assertion is a threshold on one metric of a result, e.g. acquire.p99<10ms.
type Assertion struct {
	// Expr is the assertion as written.
	Expr string
	// Metric is the metric's path, e.g. acquire.p99 or incidents.overlaps.
	Metric string
	// Op is one of < <= > >= == != (= is read as ==).
	Op string
	// Value is the threshold, in the metric's unit (µs for latencies).
	Value float64
}

// AssertHelp describes the assertion language.
const AssertHelp = "METRIC OP VALUE, e.g. acquire.p99<10ms, incidents.overlaps==0, throughput>1000, contention.rate<0.5, errors==0, fairness.jain>0.9; " +
	"OP is < <= > >= == != or = (the same as ==); latency metrics are OP.pNN (p50 p90 p95 p99 p999 max mean) and take durations; see the README for every metric"

var assertOps = []string{"<=", ">=", "==", "!=", "<", ">", "="}

// ParseAssertion parses METRIC OP VALUE; METRIC is a figure of the catalogue.
func ParseAssertion(expr string) (Assertion, error) {
	s := strings.TrimSpace(expr)
	for _, op := range assertOps {
		i := strings.Index(s, op)
		if i <= 0 {
			continue
		}
		a := Assertion{Expr: expr, Metric: strings.TrimSpace(s[:i]), Op: op}
		if op == "=" {
			a.Op = "=="
		}
		f, err := LookupFigure(a.Metric)
		if err != nil {
			return Assertion{}, fmt.Errorf("assert %q: %v; want %s", expr, err, AssertHelp)
		}
		v, err := parseThreshold(f, strings.TrimSpace(s[i+len(op):]))
		if err != nil {
			return Assertion{}, fmt.Errorf("assert %q: %v; want %s", expr, err, AssertHelp)
		}
		a.Value = v
		return a, nil
	}
	return Assertion{}, fmt.Errorf("assert %q: no comparison operator; want %s", expr, AssertHelp)
}

func parseThreshold(f Figure, s string) (float64, error) {
	if f.IsLatency() {
		if d, err := time.ParseDuration(s); err == nil {
			return float64(d) / float64(time.Microsecond), nil
		}
		if v, err := strconv.ParseFloat(s, 64); err == nil {
			return v, nil
		}
		return 0, fmt.Errorf("%q is not a duration (latency thresholds are durations such as 5ms)", s)
	}
	if p, ok := strings.CutSuffix(s, "%"); ok {
		v, err := strconv.ParseFloat(p, 64)
		if err != nil {
			return 0, fmt.Errorf("%q is not a percentage", s)
		}
		return v / 100, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	return v, nil
}

// For retargets a bare percentile (p99, acquire's by default) to op's: an
// open-loop SLO on p99 must read time_to_acquire, which counts from each
// request's intended start, not the service time of one attempt. Other
// assertions are returned unchanged.
func (a Assertion) For(op string) Assertion {
	if _, bare := aliases[a.Metric]; bare && a.Metric != "throughput" {
		a.Metric = op + "." + a.Metric
	}
	return a
}

// IsLatency reports whether the assertion's metric is a latency, in µs.
func (a Assertion) IsLatency() bool {
	f, err := LookupFigure(a.Metric)
	return err == nil && f.IsLatency()
}

// Measure reads the assertion's metric from r.
func (a Assertion) Measure(r *Result) (float64, error) {
	return Metric(r, a.Metric)
}

// Metric reads a figure of the catalogue by name or alias, or says why r
// does not have it.
func Metric(r *Result, metric string) (float64, error) {
	f, err := LookupFigure(metric)
	if err != nil {
		return 0, err
	}
	v, err := f.Value(r)
	if err != nil {
		return 0, fmt.Errorf("metric %s: %w", metric, err)
	}
	return v, nil
}

// Holds reports whether v satisfies the assertion.
func (a Assertion) Holds(v float64) bool {
	switch a.Op {
	case "<":
		return v < a.Value
	case "<=":
		return v <= a.Value
	case ">":
		return v > a.Value
	case ">=":
		return v >= a.Value
	case "!=":
		return v != a.Value
	}
	return v == a.Value
}

// Check is one assertion's verdict on one run.
type Check struct {
	Assertion Assertion
	RunID     string
	Actual    float64
	Passed    bool
	Err       string
}

// CheckAll evaluates every assertion on every run.
func CheckAll(as []Assertion, rs []*Result) []Check {
	var out []Check
	for _, r := range rs {
		for _, a := range as {
			v, err := a.Measure(r)
			c := Check{Assertion: a, RunID: r.ID, Actual: v, Passed: err == nil && a.Holds(v)}
			if err != nil {
				c.Err = err.Error()
			}
			out = append(out, c)
		}
	}
	return out
}

// Failed returns the checks that did not pass.
func Failed(cs []Check) []Check {
	var out []Check
	for _, c := range cs {
		if !c.Passed {
			out = append(out, c)
		}
	}
	return out
}

// ActualText is the measured value in the metric's unit, "-" when the metric
// could not be read.
func (c Check) ActualText() string {
	switch {
	case c.Err != "":
		return "-"
	case c.Assertion.IsLatency():
		return FormatUS(c.Actual)
	}
	return strconv.FormatFloat(c.Actual, 'g', 6, 64)
}

// WriteChecks prints the checks as a table, failures marked.
func WriteChecks(w io.Writer, cs []Check) error {
	t := NewTable(w, LabelColumn("assert"), LabelColumn("run"), RowFigureColumn("actual"), LabelColumn("verdict"))
	for _, c := range cs {
		actual := c.ActualText()
		verdict := "pass"
		if !c.Passed {
			verdict = "FAIL"
			if c.Err != "" {
				verdict += ": " + c.Err
			}
		}
		_ = t.Append(c.Assertion.Expr, c.RunID, actual, verdict)
	}
	return t.Render()
}
