package results

import (
	"strings"
	"testing"
)

func TestParseAssertion(t *testing.T) {
	for _, tc := range []struct {
		expr   string
		metric string
		op     string
		value  float64
		bad    string
	}{
		{expr: "acquire.p99<10ms", metric: "acquire.p99", op: "<", value: 10000},
		{expr: "p99 < 5ms", metric: "p99", op: "<", value: 5000},
		{expr: "incidents.overlaps==0", metric: "incidents.overlaps", op: "==", value: 0},
		{expr: "incidents=0", metric: "incidents", op: "==", value: 0},
		{expr: "throughput>=1000", metric: "throughput", op: ">=", value: 1000},
		{expr: "contention.rate<50%", metric: "contention.rate", op: "<", value: 0.5},
		{expr: "release.count>0", metric: "release.count", op: ">", value: 0},
		{expr: "acquire.p99", bad: "no comparison"},
		{expr: "acquire.p98<1ms", bad: "p50 p90"},
		{expr: "latency<1ms", bad: "unknown metric"},
		{expr: "acquire.p99<fast", bad: "not a duration"},
		{expr: "contention<1", bad: "contention has attempts acquired"},
		{expr: "<1", bad: "no comparison"},
	} {
		a, err := ParseAssertion(tc.expr)
		if tc.bad != "" {
			if err == nil || !strings.Contains(err.Error(), tc.bad) {
				t.Errorf("ParseAssertion(%q) = %v, want error containing %q", tc.expr, err, tc.bad)
			}
			continue
		}
		if err != nil || a.Metric != tc.metric || a.Op != tc.op || a.Value != tc.value {
			t.Errorf("ParseAssertion(%q) = %+v, %v", tc.expr, a, err)
		}
	}
}

func TestCheckAll(t *testing.T) {
	r := &Result{ID: "r1", Ops: map[string]OpSummary{OpAcquire: {Count: 10, LatencyUS: Percentiles{P99: 4000}}},
		Counts: Counts{Incidents: Incidents{Overlaps: 2}, Contention: Contention{Rate: 0.25}}, Throughput: Throughput{AcquiredPerS: 500}}
	var as []Assertion
	for _, e := range []string{"acquire.p99<5ms", "incidents.overlaps==0", "contention.rate<0.5", "throughput>1000", "servers.cpu_us_per_acquire<1"} {
		a, err := ParseAssertion(e)
		if err != nil {
			t.Fatal(err)
		}
		as = append(as, a)
	}
	cs := CheckAll(as, []*Result{r})
	var failed []string
	for _, c := range Failed(cs) {
		failed = append(failed, c.Assertion.Expr)
	}
	want := "incidents.overlaps==0 throughput>1000 servers.cpu_us_per_acquire<1"
	if got := strings.Join(failed, " "); got != want {
		t.Fatalf("failed %q, want %q", got, want)
	}
	var sb strings.Builder
	if err := WriteChecks(&sb, cs); err != nil || !strings.Contains(sb.String(), "FAIL") {
		t.Fatalf("table: %v\n%s", err, sb.String())
	}
}

func FuzzParseAssertion(f *testing.F) {
	for _, s := range []string{"acquire.p99<10ms", "incidents==0", "contention.rate<5%", "x>=", "p99<"} {
		f.Add(s)
	}
	// A result where every operation was recorded and every figure measured:
	// whatever parses must be readable from it.
	full := &Result{Ops: map[string]OpSummary{}, Servers: &Servers{}}
	for _, op := range opOrder() {
		full.Ops[op] = OpSummary{Count: 1}
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseAssertion(s)
		if err != nil {
			return
		}
		if _, err := Metric(full, a.Metric); err != nil {
			t.Fatalf("%q parsed but its metric cannot be read: %v", s, err)
		}
	})
}

// Server figures summed over only the nodes that answered INFO are not a
// measurement: every reader of a metric (tables, --assert, --slo) must see
// them as missing, not as a small number.
func TestMetricServersPartlyUnavailable(t *testing.T) {
	r := fixture(t, "partial-info", fixtureOpts{servers: true})
	if _, err := Metric(r, "servers.commands_per_acquire"); err != nil {
		t.Fatalf("all nodes answered: %v", err)
	}
	r.Servers.Unavailable = "INFO not available on 127.0.0.1:7002: ERR unknown command"
	if v, err := Metric(r, "servers.commands_per_acquire"); err == nil || !strings.Contains(err.Error(), "127.0.0.1:7002") {
		t.Fatalf("partial server figures read as %v, %v; want an error naming the node", v, err)
	}
}

// A metric must read what it names, or refuse: not some other figure, and
// not a 0 that no run measured.
func TestMetricReadsWhatItNames(t *testing.T) {
	r := fixture(t, "m", fixtureOpts{})
	r.Errors = map[string]int64{"timeout": 3, "no_quorum": 50}
	for _, tc := range []struct {
		metric string
		want   float64
		bad    string // part of the error; "" when the read must succeed
	}{
		{metric: "errors", want: 53},
		{metric: "errors.timeout", want: 3},
		{metric: "errors.readonly", want: 0},
		{metric: "throughput", want: r.Throughput.AcquiredPerS},
		{metric: "throughput.attempts_per_s", want: r.Throughput.AttemptsPerS},
		{metric: "throughput.bogus", bad: "throughput has acquired_per_s attempts_per_s"},
		{metric: "p99.x", bad: "OP.p99"},
		{metric: "renew.p99", bad: "recorded no renew"},
		{metric: "renew.count", want: 0},
	} {
		t.Run(tc.metric, func(t *testing.T) {
			got, err := Metric(r, tc.metric)
			switch {
			case tc.bad == "" && (err != nil || got != tc.want):
				t.Fatalf("= %v, %v; want %v", got, err, tc.want)
			case tc.bad != "" && (err == nil || !strings.Contains(err.Error(), tc.bad)):
				t.Fatalf("= %v, %v; want an error mentioning %q", got, err, tc.bad)
			}
		})
	}
}

// TestAssertHelpNamesEveryOperator: the help an error prints lists every
// operator ParseAssertion takes ('incidents=0' is accepted).
func TestAssertHelpNamesEveryOperator(t *testing.T) {
	for _, op := range assertOps {
		if !strings.Contains(AssertHelp, " "+op+" ") {
			t.Errorf("AssertHelp %q does not name the operator %s", AssertHelp, op)
		}
	}
}
