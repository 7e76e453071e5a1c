package results

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// withOffered gives r's series an offered count per second: a ramp.
func withOffered(r *Result, perSecond func(s int) int64) *Result {
	for i := range r.Series {
		n := perSecond(i + 1)
		r.Series[i].Offered = &n
	}
	return r
}

func TestOfferedInJSONAndCSV(t *testing.T) {
	open := withOffered(fixture(t, "run-open", fixtureOpts{series: true}), func(s int) int64 { return int64(100 * s) })
	closed := fixture(t, "run-closed", fixtureOpts{series: true})
	b, err := json.Marshal(open.Series[:2])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"offered":100`) || !strings.Contains(string(b), `"offered":200`) {
		t.Errorf("open-loop series JSON lacks offered: %s", b)
	}
	if b, _ := json.Marshal(closed.Series[0]); strings.Contains(string(b), "offered") {
		t.Errorf("closed-loop series JSON has an offered figure it never measured: %s", b)
	}
	var buf bytes.Buffer
	if err := WriteSeriesCSV(&buf, open); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(buf.String(), "\n")
	if !strings.HasSuffix(lines[0], ",offered") || !strings.HasSuffix(lines[3], ",300") {
		t.Errorf("series CSV lacks the offered column:\n%s", strings.Join(lines[:4], "\n"))
	}
	buf.Reset()
	if err := WriteSeriesCSV(&buf, closed); err != nil {
		t.Fatal(err)
	}
	if line := strings.Split(buf.String(), "\n")[1]; !strings.HasSuffix(line, ",") {
		t.Errorf("closed-loop series CSV row %q: want an empty offered cell", line)
	}
}

func TestMergeSumsOffered(t *testing.T) {
	a := withOffered(fixture(t, "gen-0", fixtureOpts{series: true}), func(s int) int64 { return int64(s) })
	b := withOffered(fixture(t, "gen-1", fixtureOpts{series: true}), func(s int) int64 { return 10 })
	got := mergeSeries([]*Result{a, b})
	if len(got) == 0 || got[2].Offered == nil || *got[2].Offered != 13 {
		t.Fatalf("merged second 3 offered %v, want 3 + 10", got[2].Offered)
	}
	if merged := mergeSeries([]*Result{fixture(t, "c", fixtureOpts{series: true})}); merged[0].Offered != nil {
		t.Fatalf("merged closed-loop series has offered %d, want none", *merged[0].Offered)
	}
}

func TestReportPlotsOfferedAgainstServed(t *testing.T) {
	open := withOffered(fixture(t, "run-open", fixtureOpts{series: true}), func(s int) int64 { return int64(100 * s) })
	closed := fixture(t, "run-closed", fixtureOpts{series: true})
	doc := string(writeReport(t, []*Result{open, closed}))
	if n := strings.Count(doc, `class="data offered"`); n != 1 {
		t.Errorf("report has %d offered lines, want 1 (the open-loop run's only)", n)
	}
	if !strings.Contains(doc, "requests offered per second") {
		t.Error("throughput chart does not say what its dotted line is")
	}
	// The y axis reaches the highest offered rate, 2000/s in second 20.
	if !strings.Contains(doc, ">2000<") && !strings.Contains(doc, ">2500<") {
		t.Error("throughput chart's y axis does not reach the offered rate")
	}
	if doc := string(writeReport(t, []*Result{closed})); strings.Contains(doc, "offered") {
		t.Error("a closed-loop report mentions an offered rate")
	}
}
