package results

import (
	"strings"
	"testing"
)

func TestViewFigures(t *testing.T) {
	for _, tc := range []struct {
		name    string
		columns []string
		want    []string // figure names; nil with wantErr
		wantErr string
	}{
		{name: "defaults", want: LockCostView().Defaults},
		{name: "names and short names", columns: []string{"acquire.p95, p99", "errors.timeout"}, want: []string{"acquire.p95", "acquire.p99", "errors.timeout"}},
		{name: "repeated flag", columns: []string{"throughput", "fairness.jain"}, want: []string{"throughput.acquired_per_s", "fairness.jain"}},
		{name: "empty pieces ignored", columns: []string{",acquire.p50,"}, want: []string{"acquire.p50"}},
		{name: "unknown name", columns: []string{"acquire.p50,acquire.p98"}, wantErr: `--columns "acquire.p98": not a figure; accepted: duration_s, throughput.acquired_per_s`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			figs, err := LockCostView().Figures(tc.columns)
			if tc.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) || !strings.HasSuffix(err.Error(), "errors.KIND") {
					t.Fatalf("error %v, want prefix %q listing every name", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range figs {
				got = append(got, f.Name)
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("figures %v, want %v", got, tc.want)
			}
		})
	}
}

// TestFigurePrecision: the precision on the figure decides both the text
// and the value ratios are taken of.
func TestFigurePrecision(t *testing.T) {
	for _, tc := range []struct {
		name  string
		v     float64
		text  string
		shown float64
	}{
		{"contention.rate", 0.40849, "0.4085", 0.4085},
		{"fairness.jain", 0.93251, "0.933", 0.933},
		{"contention.attempts_per_acquire", 1.255, "1.25", 1.25},
		{"throughput", 2097.5, "2098", 2098},
		{"acquire.errors", 0.5, "0", 0},
		{"duration_s", 9.96, "10.0s", 10},
		{"acquire.p99", 1418, "1.42ms", 1420},
		{"acquire.p99", 999.4, "999µs", 999},
		{"acquire.p99", 12_345, "12.3ms", 12_300},
	} {
		f, err := LookupFigure(tc.name)
		if err != nil {
			t.Fatal(err)
		}
		if got := f.Format(tc.v); got != tc.text {
			t.Errorf("%s %v: text %q, want %q", tc.name, tc.v, got, tc.text)
		}
		if got := f.Shown(tc.v); got != tc.shown {
			t.Errorf("%s %v: shown %v, want %v", tc.name, tc.v, got, tc.shown)
		}
	}
}

// FuzzViewColumns: any --columns value resolves to figures or is refused
// with the accepted list; never a panic, never an empty view.
func FuzzViewColumns(f *testing.F) {
	for _, s := range []string{"", "p99", "acquire.p95,client.cpu_us_per_acquire", "errors.", ",,,", "errors.x,y", "fairness.jain, p50"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		figs, err := SweepView().Figures([]string{s})
		switch {
		case err != nil && !strings.Contains(err.Error(), "accepted: "):
			t.Fatalf("%q: error %v does not list the accepted names", s, err)
		case err == nil && len(figs) == 0:
			t.Fatalf("%q: no figures and no error", s)
		}
	})
}
