package workloads

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseDist(t *testing.T) {
	good := []struct {
		spec, want string
		mean       time.Duration
	}{
		{"10ms", "const:10ms", 10 * time.Millisecond},
		{"0", "const:0s", 0},
		{" 1h ", "const:1h0m0s", time.Hour},
		{"const:0", "const:0s", 0},
		{"const:1500ms", "const:1.5s", 1500 * time.Millisecond},
		{"CONST:2us", "const:2µs", 2 * time.Microsecond},
		{"uniform:30ms,45ms", "uniform:30ms,45ms", 37500 * time.Microsecond},
		{"uniform: 1ms , 1ms", "uniform:1ms,1ms", time.Millisecond},
		{"uniform:0,1h", "uniform:0s,1h0m0s", 30 * time.Minute},
		{"exp:5ms", "exp:5ms", 5 * time.Millisecond},
		{"lognormal:1500ms,0.3", "lognormal:1.5s,0.3", 1569 * time.Millisecond},
		{"lognormal:10ms,0", "lognormal:10ms,0", 10 * time.Millisecond},
		{"pareto:1ms,3", "pareto:1ms,3", 1500 * time.Microsecond},
		{"pareto:1ms,1.5", "pareto:1ms,1.5", 3 * time.Millisecond},
	}
	for _, tc := range good {
		d, err := ParseDist(tc.spec)
		if err != nil {
			t.Errorf("ParseDist(%q): %v", tc.spec, err)
			continue
		}
		if got := d.String(); got != tc.want {
			t.Errorf("ParseDist(%q).String() = %q, want %q", tc.spec, got, tc.want)
		}
		// Means are compared to 0.1% (and a microsecond): the truncation
		// at MaxSample moves them slightly from the textbook values.
		if got := d.Mean(); math.Abs(float64(got-tc.mean)) > 0.001*float64(tc.mean)+1e3 {
			t.Errorf("ParseDist(%q).Mean() = %v, want %v", tc.spec, got, tc.mean)
		}
	}

	bad := []struct{ spec, why string }{
		{"", "empty"},
		{"fast", "not a duration"},
		{"10", "not a duration"},
		{"-1ms", "outside 0..1h0m0s"},
		{"2h", "outside 0..1h0m0s"},
		{"const:", "not a duration"},
		{"const:-5ms", "outside"},
		{"uniform:5ms", "needs A,B"},
		{"uniform:5ms,1ms", "B 1ms is below A 5ms"},
		{"uniform:x,1ms", "A \"x\" is not a duration"},
		{"uniform:1ms,y", "B \"y\" is not a duration"},
		{"exp:0", "MEAN must be positive"},
		{"exp:-1s", "outside"},
		{"exp:1ms,2ms", "not a duration"},
		{"lognormal:10ms", "needs MEDIAN,SIGMA"},
		{"lognormal:0,1", "MEDIAN must be positive"},
		{"lognormal:10ms,-1", "SIGMA must be >= 0"},
		{"lognormal:10ms,NaN", "not a number"},
		{"pareto:1ms", "needs MIN,ALPHA"},
		{"pareto:0,2", "MIN must be positive"},
		{"pareto:1ms,0", "ALPHA must be > 0"},
		{"pareto:1ms,-2", "ALPHA must be > 0"},
		{"pareto:1ms,+Inf", "not a number"},
		{"weibull:1ms,2", `unknown kind "weibull"; want one of const, uniform, exp, lognormal, pareto`},
		{"expo:1ms", `unknown kind "expo"; did you mean exp?`},
	}
	for _, tc := range bad {
		_, err := ParseDist(tc.spec)
		if err == nil {
			t.Errorf("ParseDist(%q) succeeded, want error containing %q", tc.spec, tc.why)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, tc.why) || !strings.HasPrefix(msg, "distribution ") ||
			!strings.Contains(msg, "; want ") && !strings.Contains(msg, "; did you mean ") || strings.Contains(msg, "\n") {
			t.Errorf("ParseDist(%q) error = %q, want one line with %q and the accepted forms", tc.spec, msg, tc.why)
		}
	}
}

func TestConst(t *testing.T) {
	for _, tc := range []struct{ in, want time.Duration }{
		{0, 0}, {time.Millisecond, time.Millisecond}, {-time.Second, 0}, {2 * time.Hour, MaxSample},
	} {
		d := Const(tc.in)
		if got := d.Sample(testRNG()); got != tc.want || d.Mean() != tc.want {
			t.Errorf("Const(%v) samples %v, mean %v; want %v", tc.in, got, d.Mean(), tc.want)
		}
		if again, err := ParseDist(d.String()); err != nil || again.String() != d.String() {
			t.Errorf("Const(%v).String() = %q does not round-trip: %v", tc.in, d, err)
		}
	}
}

func mustDist(t testing.TB, spec string) Dist {
	t.Helper()
	d, err := ParseDist(spec)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// draw takes n samples, checking each stays within [0, MaxSample].
func draw(t *testing.T, d Dist, n int) []float64 {
	t.Helper()
	rng := testRNG()
	xs := make([]float64, n)
	for i := range xs {
		s := d.Sample(rng)
		if s < 0 || s > MaxSample {
			t.Fatalf("%v: sample %v outside 0..%v", d, s, MaxSample)
		}
		xs[i] = float64(s)
	}
	return xs
}

func mean(xs []float64) float64 {
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func within(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol*math.Abs(want) {
		t.Errorf("%s = %.6g, want %.6g within %.1f%%", what, got, want, 100*tol)
	}
}

const samples = 200_000

func TestDistSampleMoments(t *testing.T) {
	ms := float64(time.Millisecond)

	xs := draw(t, mustDist(t, "exp:5ms"), samples)
	within(t, "exp:5ms mean", mean(xs), 5*ms, 0.03)
	within(t, "exp:5ms median", median(xs), 5*ms*math.Ln2, 0.03)

	xs = draw(t, mustDist(t, "lognormal:1500ms,0.3"), samples)
	within(t, "lognormal:1500ms,0.3 median", median(xs), 1500*ms, 0.03)
	within(t, "lognormal:1500ms,0.3 mean", mean(xs), 1500*ms*math.Exp(0.045), 0.03)

	xs = draw(t, mustDist(t, "uniform:30ms,45ms"), samples)
	within(t, "uniform:30ms,45ms mean", mean(xs), 37.5*ms, 0.01)
	if lo, hi := slices.Min(xs), slices.Max(xs); lo < 30*ms || hi > 45*ms || lo > 30.01*ms || hi < 44.99*ms {
		t.Errorf("uniform:30ms,45ms range %v..%v, want to fill 30ms..45ms", time.Duration(lo), time.Duration(hi))
	}

	d := mustDist(t, "pareto:1ms,3")
	xs = draw(t, d, samples)
	within(t, "pareto:1ms,3 mean", mean(xs), 1.5*ms, 0.03)
	within(t, "pareto:1ms,3 median", median(xs), ms*math.Pow(2, 1.0/3), 0.03)
	if lo := slices.Min(xs); lo < ms {
		t.Errorf("pareto:1ms,3 sampled %v, below its minimum", time.Duration(lo))
	}

	xs = draw(t, mustDist(t, "const:7ms"), 100)
	if slices.Min(xs) != 7*ms || slices.Max(xs) != 7*ms {
		t.Error("const:7ms sampled something else")
	}
}

// TestDistTruncatedMean checks Mean against samples where the MaxSample cap
// matters, since Mean is documented as the mean of what Sample draws.
func TestDistTruncatedMean(t *testing.T) {
	for _, tc := range []struct {
		spec string
		n    int
		tol  float64
	}{
		{"exp:1h", samples, 0.03},
		{"lognormal:30m,2", samples, 0.03},
		{"lognormal:1ms,100", samples, 0.03},
		{"pareto:1m,1", samples, 0.03},
		{"pareto:1s,0.5", samples, 0.03},
		{"pareto:1us,0.001", samples, 0.03},
		// Heavy tails below the cap converge slowly; the loose tolerance
		// still tells a finite truncated mean from an untruncated one.
		{"pareto:1ms,1", 1_000_000, 0.10},
	} {
		d := mustDist(t, tc.spec)
		within(t, tc.spec+" sample mean vs Mean()", mean(draw(t, d, tc.n)), float64(d.Mean()), tc.tol)
	}
	if m := mustDist(t, "pareto:1us,0.001").Mean(); m < MaxSample*97/100 || m > MaxSample {
		t.Errorf("pareto:1us,0.001 mean %v, want just under %v", m, MaxSample)
	}
}

func TestDistExtremesStayInRange(t *testing.T) {
	for _, spec := range []string{"lognormal:1h,1e308", "lognormal:1ns,1e308", "pareto:1ns,1e-308",
		"pareto:1h,1e308", "exp:1h", "exp:1ns", "uniform:0,1h", "lognormal:1ns,0"} {
		d := mustDist(t, spec)
		draw(t, d, 10_000)
		if m := d.Mean(); m < 0 || m > MaxSample {
			t.Errorf("%s: Mean() = %v outside 0..%v", spec, m, MaxSample)
		}
	}
}

func FuzzParseDist(f *testing.F) {
	for _, s := range []string{"10ms", "0", "const:1.5s", "uniform:30ms,45ms", "exp:5ms", "lognormal:1500ms,0.3",
		"pareto:1ms,1.5", "pareto:1ns,1e-300", "lognormal:1h,1e308", "uniform:1h,0", ":", "exp:", "const:1h0m0.000000001s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		d, err := ParseDist(spec)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error: %q", err)
			}
			return
		}
		again, err := ParseDist(d.String())
		if err != nil {
			t.Fatalf("ParseDist(%q) ok as %q, which does not parse: %v", spec, d, err)
		}
		if again.String() != d.String() {
			t.Fatalf("round trip %q -> %q -> %q", spec, d, again)
		}
		if m := d.Mean(); m < 0 || m > MaxSample {
			t.Fatalf("%v: Mean() = %v", d, m)
		}
		rng := testRNG()
		for i := 0; i < 8; i++ {
			if s := d.Sample(rng); s < 0 || s > MaxSample {
				t.Fatalf("%v: sample %v", d, s)
			}
		}
	})
}

func BenchmarkDistSample(b *testing.B) {
	for _, spec := range []string{"const:5ms", "uniform:30ms,45ms", "exp:5ms", "lognormal:1500ms,0.3", "pareto:1ms,1.5"} {
		d := mustDist(b, spec)
		b.Run(spec, func(b *testing.B) {
			rng := testRNG()
			b.ReportAllocs()
			var sink time.Duration
			for b.Loop() {
				sink += d.Sample(rng)
			}
			_ = sink
		})
	}
}

// TestSamplingAllocatesNothing enforces what the benchmarks show: workers
// call these on every request, so an allocation would be measured as lock cost.
func TestSamplingAllocatesNothing(t *testing.T) {
	rng := testRNG()
	for _, spec := range []string{"const:5ms", "uniform:30ms,45ms", "exp:5ms", "lognormal:1500ms,0.3", "pareto:1ms,1.5"} {
		d := mustDist(t, spec)
		if n := testing.AllocsPerRun(1000, func() { d.Sample(rng) }); n != 0 {
			t.Errorf("%s: Sample allocates %v times", spec, n)
		}
	}
	for _, spec := range []string{"unique", "uniform:1000", "zipf:10000,1.1", "hot:1000,0.5"} {
		c := mustKeys(t, spec)
		if n := testing.AllocsPerRun(1000, func() { c.Key(3, rng) }); n != 0 {
			t.Errorf("%s: Key allocates %v times", spec, n)
		}
	}
}
