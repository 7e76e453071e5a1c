package workloads

import "testing"

func TestParseRenewer(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want Renewer
		bad  bool
	}{
		{spec: "", want: RenewInline},
		{spec: "inline", want: RenewInline},
		{spec: " Goroutine ", want: RenewGoroutine},
		{spec: "thread", bad: true},
		{spec: "goroutines", bad: true},
	} {
		got, err := ParseRenewer(tc.spec)
		switch {
		case tc.bad && err == nil:
			t.Errorf("%q: accepted as %v; want refused", tc.spec, got)
		case !tc.bad && (err != nil || got != tc.want):
			t.Errorf("%q: %v, %v; want %v", tc.spec, got, err, tc.want)
		}
	}
}

func FuzzParseRenewer(f *testing.F) {
	for _, s := range []string{"", "inline", "goroutine", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		r, err := ParseRenewer(spec)
		if err != nil {
			return
		}
		if again, err := ParseRenewer(r.String()); err != nil || again != r {
			t.Fatalf("%q: %v does not parse back (%v, %v)", spec, r, again, err)
		}
	})
}
