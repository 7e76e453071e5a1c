package lockimpl

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

func TestParseRetry(t *testing.T) {
	for _, tc := range []struct {
		spec    string
		want    RetryPolicy
		wantErr string
	}{
		{spec: "none", want: RetryPolicy{Kind: RetryNone}},
		{spec: "fixed:5ms", want: RetryPolicy{Kind: RetryFixed, Delay: 5 * time.Millisecond}},
		{spec: "exp:1ms,100ms", want: RetryPolicy{Kind: RetryExp, Delay: time.Millisecond, Cap: 100 * time.Millisecond}},
		{spec: "", wantErr: "unknown strategy"},
		{spec: "none:1", wantErr: "no arguments"},
		{spec: "fixed", wantErr: "not a duration"},
		{spec: "fixed:-1ms", wantErr: "not positive"},
		{spec: "exp:1ms", wantErr: "BASE,CAP"},
		{spec: "exp:10ms,1ms", wantErr: "below base"},
		{spec: "linear:1ms", wantErr: "unknown strategy"},
	} {
		got, err := ParseRetry(tc.spec)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "want") {
				t.Errorf("ParseRetry(%q) error %v, want one containing %q and the accepted forms", tc.spec, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseRetry(%q) = %+v, %v; want %+v", tc.spec, got, err, tc.want)
		}
	}
}

func FuzzParseRetry(f *testing.F) {
	for _, s := range []string{"none", "fixed:5ms", "exp:1ms,100ms", "exp:,", "fixed:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		p, err := ParseRetry(spec)
		if err != nil {
			return
		}
		again, err := ParseRetry(p.String())
		if err != nil || again != p {
			t.Fatalf("%q parsed to %+v, which renders as %q and parses back to %+v, %v", spec, p, p.String(), again, err)
		}
		rng := rand.New(rand.NewPCG(1, 2))
		for k := range 70 {
			if d := p.Backoff(k, rng); d < 0 || (p.Kind == RetryExp && d > p.Cap) {
				t.Fatalf("backoff %d of %+v = %v", k, p, d)
			}
		}
	})
}

func TestQuorumAndValidity(t *testing.T) {
	for n, want := range map[int]int{1: 1, 2: 2, 3: 2, 4: 3, 5: 3, 6: 4, 7: 4, 8: 5, 9: 5} {
		if got := Quorum(n); got != want {
			t.Errorf("Quorum(%d) = %d, want %d", n, got, want)
		}
	}
	ttl := 10 * time.Second
	for _, tc := range []struct {
		elapsed time.Duration
		drift   float64
		want    time.Duration
	}{
		{0, 0.01, ttl - 100*time.Millisecond - 2*time.Millisecond},
		{time.Second, 0.01, ttl - time.Second - 102*time.Millisecond},
		{ttl - 102*time.Millisecond, 0.01, 0},
		{ttl, 0.01, -102 * time.Millisecond},
		{0, 0, ttl - 2*time.Millisecond},
	} {
		if got := Validity(ttl, tc.elapsed, tc.drift); got != tc.want {
			t.Errorf("Validity(%v, %v, %v) = %v, want %v", ttl, tc.elapsed, tc.drift, got, tc.want)
		}
	}
	if d := NodeTimeoutFor(time.Second); d != 10*time.Millisecond {
		t.Errorf("node timeout for 1s ttl = %v, want 10ms", d)
	}
	if d := NodeTimeoutFor(time.Minute); d != 50*time.Millisecond {
		t.Errorf("node timeout for 1m ttl = %v, want 50ms", d)
	}
}

func TestTallyDecides(t *testing.T) {
	for _, tc := range []struct {
		n, ok, taken, fails int
		decided             bool
	}{
		{5, 3, 0, 0, true},
		{5, 2, 0, 0, false},
		{5, 2, 2, 0, false},
		{5, 2, 3, 0, true},
		{5, 0, 0, 3, true},
		{1, 0, 0, 0, false},
		{1, 1, 0, 0, true},
	} {
		tl := tally{n: tc.n, quorum: Quorum(tc.n), ok: tc.ok, taken: tc.taken, fails: tc.fails}
		if got := tl.decided(); got != tc.decided {
			t.Errorf("%+v decided = %v, want %v", tc, got, tc.decided)
		}
	}
}
