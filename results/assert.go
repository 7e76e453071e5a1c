package results

import (
	"encoding/json"
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
	// Op is one of < <= > >= == !=.
	Op string
	// Value is the threshold, in the metric's unit (µs for latencies).
	Value float64
}

// AssertHelp describes the assertion language.
const AssertHelp = "METRIC OP VALUE, e.g. acquire.p99<10ms, incidents.overlaps==0, throughput>1000, contention.rate<0.5, errors==0; " +
	"OP is < <= > >= == !=; latency metrics are OP.pNN (p50 p90 p99 p999 max mean) and take durations"

var assertOps = []string{"<=", ">=", "==", "!=", "<", ">", "="}

// ParseAssertion parses METRIC OP VALUE.
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
		if _, _, err := metricKind(a.Metric); err != nil {
			return Assertion{}, fmt.Errorf("assert %q: %v; want %s", expr, err, AssertHelp)
		}
		v, err := parseThreshold(a.Metric, strings.TrimSpace(s[i+len(op):]))
		if err != nil {
			return Assertion{}, fmt.Errorf("assert %q: %v; want %s", expr, err, AssertHelp)
		}
		a.Value = v
		return a, nil
	}
	return Assertion{}, fmt.Errorf("assert %q: no comparison operator; want %s", expr, AssertHelp)
}

// isLatency reports whether metric is an op percentile, measured in µs.
func isLatency(metric string) bool {
	op, field, ok := strings.Cut(metric, ".")
	if !ok {
		// A bare percentile is acquire's.
		switch op {
		case "p50", "p90", "p99", "p999", "max", "mean":
			return true
		}
		return false
	}
	for _, n := range opOrder() {
		if n == op {
			return field != "count" && field != "errors"
		}
	}
	return false
}

func parseThreshold(metric, s string) (float64, error) {
	if isLatency(metric) {
		if d, err := time.ParseDuration(s); err == nil {
			return float64(d) / float64(time.Microsecond), nil
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f, nil
		}
		return 0, fmt.Errorf("%q is not a duration (latency thresholds are durations such as 5ms)", s)
	}
	if p, ok := strings.CutSuffix(s, "%"); ok {
		f, err := strconv.ParseFloat(p, 64)
		if err != nil {
			return 0, fmt.Errorf("%q is not a percentage", s)
		}
		return f / 100, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	return f, nil
}

// metricKind checks that metric names something a result has.
func metricKind(metric string) (group, field string, err error) {
	group, field, _ = strings.Cut(metric, ".")
	switch group {
	case "p50", "p90", "p99", "p999", "max", "mean":
		if field != "" {
			return "", "", fmt.Errorf("metric %q: %s is acquire's; for another operation write OP.%s", metric, group, group)
		}
		return group, field, nil
	case "throughput":
		switch field {
		case "", "acquired_per_s", "attempts_per_s":
			return group, field, nil
		}
		return "", "", fmt.Errorf("metric %q: throughput has acquired_per_s and attempts_per_s", metric)
	case "errors":
		return group, field, nil
	case "incidents", "contention", "servers", "counters", "client":
		if field == "" {
			if group == "incidents" {
				return group, field, nil
			}
			return "", "", fmt.Errorf("metric %q needs a field (e.g. %s.rate)", metric, group)
		}
		// Refused here, at parse time, rather than when the first result is read.
		if _, err := jsonField(fieldsOf(group), metric, field); err != nil {
			return "", "", err
		}
		return group, field, nil
	}
	for _, n := range opOrder() {
		if n == group {
			switch field {
			case "p50", "p90", "p99", "p999", "max", "mean", "count", "errors":
				return group, field, nil
			}
			return "", "", fmt.Errorf("metric %q: %s has p50 p90 p99 p999 max mean count errors", metric, group)
		}
	}
	return "", "", fmt.Errorf("unknown metric %q", metric)
}

// Measure reads the assertion's metric from r.
func (a Assertion) Measure(r *Result) (float64, error) {
	return Metric(r, a.Metric)
}

// Metric reads a metric by path: OP.pNN, a bare pNN (acquire's), throughput,
// errors, incidents (total) or incidents.NAME, contention.NAME, counters.NAME,
// servers.commands_per_acquire / servers.cpu_us_per_acquire,
// client.cpu_us_per_acquire.
func Metric(r *Result, metric string) (float64, error) {
	group, field, err := metricKind(metric)
	if err != nil {
		return 0, err
	}
	switch group {
	case "p50", "p90", "p99", "p999", "max", "mean":
		return percentile(r.Ops[OpAcquire].LatencyUS, group), nil
	case "throughput":
		if field == "attempts_per_s" {
			return r.Throughput.AttemptsPerS, nil
		}
		return r.Throughput.AcquiredPerS, nil
	case "errors":
		if field != "" {
			// A kind the run never saw is a measured zero.
			return float64(r.Errors[field]), nil
		}
		return float64(r.TotalErrors()), nil
	case "incidents":
		if field == "" {
			return float64(r.Incidents.Total()), nil
		}
		return jsonField(r.Incidents, metric, field)
	case "contention":
		return jsonField(r.Contention, metric, field)
	case "counters":
		return jsonField(r.Counters, metric, field)
	case "servers":
		switch {
		case r.Servers == nil:
			return 0, fmt.Errorf("metric %s: the result has no server figures", metric)
		case !r.Servers.Measured():
			return 0, fmt.Errorf("metric %s: %s", metric, r.Servers.Unavailable)
		}
		return jsonField(*r.Servers, metric, field)
	case "client":
		switch {
		case r.Client == nil:
			return 0, fmt.Errorf("metric %s: the result has no client figures", metric)
		case !r.Client.Measured():
			return 0, fmt.Errorf("metric %s: %s", metric, r.Client.Unavailable)
		}
		return jsonField(*r.Client, metric, field)
	}
	s := r.Ops[group]
	switch field {
	case "count":
		return float64(s.Count), nil
	case "errors":
		return float64(s.Errors), nil
	}
	if s.Count == 0 {
		// No latency was recorded: 0 would pass any "<" threshold unmeasured.
		return 0, fmt.Errorf("metric %s: the run recorded no %s", metric, group)
	}
	return percentile(s.LatencyUS, field), nil
}

func percentile(p Percentiles, name string) float64 {
	switch name {
	case "p50":
		return p.P50
	case "p90":
		return p.P90
	case "p99":
		return p.P99
	case "p999":
		return p.P999
	case "max":
		return p.Max
	}
	return p.Mean
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

// WriteChecks prints the checks as a table, failures marked.
func WriteChecks(w io.Writer, cs []Check) error {
	t := NewTable(w, "assert", "run", "actual", "verdict")
	for _, c := range cs {
		actual := strconv.FormatFloat(c.Actual, 'g', 6, 64)
		if isLatency(c.Assertion.Metric) || strings.HasPrefix(c.Assertion.Metric, "p") {
			actual = FormatUS(c.Actual)
		}
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

// jsonField reads a numeric field of v by its JSON name, so metric paths are
// exactly the result file's field names.
// fieldsOf is a zero value of a group's struct, whose JSON fields are the
// metric names the group accepts.
func fieldsOf(group string) any {
	switch group {
	case "incidents":
		return Incidents{}
	case "contention":
		return Contention{}
	case "servers":
		return Servers{}
	case "client":
		return Client{}
	}
	return Counters{}
}

func jsonField(v any, metric, field string) (float64, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return 0, fmt.Errorf("metric %s: %w", metric, err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return 0, fmt.Errorf("metric %s: %w", metric, err)
	}
	f, ok := m[field].(float64)
	if !ok {
		return 0, fmt.Errorf("unknown metric %q", metric)
	}
	return f, nil
}
