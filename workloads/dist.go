package workloads

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/lockbench/lockbench/results/suggest"
)

// DistHelp lists the accepted forms of a duration distribution spec
// (--hold, --think, --pause), for help text and errors.
const DistHelp = "a duration (e.g. 10ms), const:D, uniform:A,B, exp:MEAN, lognormal:MEDIAN,SIGMA or pareto:MIN,ALPHA"

// distKinds are the distribution kinds in DistHelp's order, for suggestions.
func distKinds() []string { return []string{"const", "uniform", "exp", "lognormal", "pareto"} }

// distForm is kind's form, for a refusal of its arguments ("" for no kind).
func distForm(kind string) string {
	switch strings.ToLower(strings.TrimSpace(kind)) {
	case "const":
		return "const:D"
	case "uniform":
		return "uniform:A,B"
	case "exp":
		return "exp:MEAN"
	case "lognormal":
		return "lognormal:MEDIAN,SIGMA"
	case "pareto":
		return "pareto:MIN,ALPHA"
	}
	return ""
}

// MaxSample caps every sampled duration. Heavy tails (lognormal, pareto)
// would otherwise overflow time.Duration or park a worker for days; an hour
// is already far beyond any lease a run would use. Spec parameters are held
// to the same bound.
const MaxSample = time.Hour

// Const returns a distribution that always yields d, clamped to
// [0, MaxSample] so that code building defaults cannot make Sample break
// its contract.
func Const(d time.Duration) Dist {
	return constDist{d: min(max(d, 0), MaxSample)}
}

// ParseDist parses a duration distribution spec:
//
//	D or const:D              always D (Go duration syntax, e.g. 10ms)
//	uniform:A,B               uniform over [A, B]
//	exp:MEAN                  exponential with the given mean
//	lognormal:MEDIAN,SIGMA    log-normal; SIGMA >= 0 is the std. dev. of ln
//	pareto:MIN,ALPHA          Pareto from MIN with tail index ALPHA > 0
//
// Durations must lie in [0, MaxSample]; samples are capped at MaxSample.
func ParseDist(spec string) (Dist, error) {
	s := strings.TrimSpace(spec)
	kind, args, hasArgs := strings.Cut(s, ":")
	// A refusal names the form of the kind given, or every form when the
	// kind is not one: the whole list would not fit one line after a why.
	bad := func(format string, a ...any) error {
		want := DistHelp
		if form := distForm(kind); form != "" && hasArgs {
			want = form
		}
		return fmt.Errorf("distribution %q: %s; want %s", spec, fmt.Sprintf(format, a...), want)
	}
	if s == "" {
		return nil, bad("empty")
	}
	if !hasArgs {
		d, err := parseDistDuration(s, "")
		if err != nil {
			return nil, bad("%v", err)
		}
		return constDist{d: d}, nil
	}
	two := func(what1, what2 string) (string, string, error) {
		a, b, ok := strings.Cut(args, ",")
		if !ok {
			return "", "", fmt.Errorf("%s needs %s,%s", kind, what1, what2)
		}
		return a, b, nil
	}
	switch strings.ToLower(strings.TrimSpace(kind)) {
	case "const":
		d, err := parseDistDuration(args, "")
		if err != nil {
			return nil, bad("%v", err)
		}
		return constDist{d: d}, nil
	case "uniform":
		aS, bS, err := two("A", "B")
		if err != nil {
			return nil, bad("%v", err)
		}
		a, err := parseDistDuration(aS, "A ")
		if err != nil {
			return nil, bad("%v", err)
		}
		b, err := parseDistDuration(bS, "B ")
		if err != nil {
			return nil, bad("%v", err)
		}
		if b < a {
			return nil, bad("B %v is below A %v", b, a)
		}
		return uniformDist{a: a, b: b}, nil
	case "exp":
		m, err := parseDistDuration(args, "MEAN ")
		if err != nil {
			return nil, bad("%v", err)
		}
		if m == 0 {
			return nil, bad("MEAN must be positive (use const:0 for no time)")
		}
		return expDist{mean: m}, nil
	case "lognormal":
		mS, sS, err := two("MEDIAN", "SIGMA")
		if err != nil {
			return nil, bad("%v", err)
		}
		m, err := parseDistDuration(mS, "MEDIAN ")
		if err != nil {
			return nil, bad("%v", err)
		}
		if m == 0 {
			return nil, bad("MEDIAN must be positive")
		}
		sigma, err := parseFinite(sS)
		if err != nil {
			return nil, bad("SIGMA %v", err)
		}
		if sigma < 0 {
			return nil, bad("SIGMA must be >= 0")
		}
		return lognormalDist{median: m, sigma: sigma}, nil
	case "pareto":
		mS, aS, err := two("MIN", "ALPHA")
		if err != nil {
			return nil, bad("%v", err)
		}
		m, err := parseDistDuration(mS, "MIN ")
		if err != nil {
			return nil, bad("%v", err)
		}
		if m == 0 {
			return nil, bad("MIN must be positive")
		}
		alpha, err := parseFinite(aS)
		if err != nil {
			return nil, bad("ALPHA %v", err)
		}
		if !(alpha > 0) {
			return nil, bad("ALPHA must be > 0")
		}
		return paretoDist{min: m, alpha: alpha}, nil
	}
	return nil, fmt.Errorf("distribution %q: unknown kind %q; %s", spec, kind, suggest.Unknown(kind, distKinds()))
}

func parseDistDuration(s, what string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%s%q is not a duration", what, s)
	}
	if d < 0 || d > MaxSample {
		return 0, fmt.Errorf("%s%v is outside 0..%v", what, d, MaxSample)
	}
	return d, nil
}

// toDuration converts a sample in nanoseconds, mapping NaN and negatives to 0
// and capping at MaxSample before the conversion can overflow.
func toDuration(ns float64) time.Duration {
	switch {
	case !(ns > 0):
		return 0
	case ns >= float64(MaxSample):
		return MaxSample
	}
	return time.Duration(math.Round(ns))
}

type constDist struct{ d time.Duration }

func (c constDist) Sample(*rand.Rand) time.Duration { return c.d }
func (c constDist) Mean() time.Duration             { return c.d }
func (c constDist) String() string                  { return "const:" + c.d.String() }

type uniformDist struct{ a, b time.Duration }

func (u uniformDist) Sample(rng *rand.Rand) time.Duration {
	return u.a + time.Duration(rng.Int64N(int64(u.b-u.a)+1))
}
func (u uniformDist) Mean() time.Duration { return u.a + (u.b-u.a)/2 }
func (u uniformDist) String() string      { return "uniform:" + u.a.String() + "," + u.b.String() }

// Means below are those of the distribution as sampled, i.e. truncated at
// MaxSample: that is what a run experiences, and it stays finite where the
// untruncated mean does not (pareto with ALPHA <= 1).

type expDist struct{ mean time.Duration }

func (e expDist) Sample(rng *rand.Rand) time.Duration {
	return toDuration(rng.ExpFloat64() * float64(e.mean))
}

// Mean is E[min(X, c)] = m·(1 − e^(−c/m)).
func (e expDist) Mean() time.Duration {
	m := float64(e.mean)
	return toDuration(-m * math.Expm1(-float64(MaxSample)/m))
}
func (e expDist) String() string { return "exp:" + e.mean.String() }

type lognormalDist struct {
	median time.Duration
	sigma  float64
}

func (l lognormalDist) Sample(rng *rand.Rand) time.Duration {
	return toDuration(float64(l.median) * math.Exp(l.sigma*rng.NormFloat64()))
}

// Mean is E[min(X, c)] = e^(μ+σ²/2)·Φ((ln c − μ − σ²)/σ) + c·(1 − Φ((ln c − μ)/σ)).
func (l lognormalDist) Mean() time.Duration {
	c := float64(MaxSample)
	if l.sigma == 0 {
		return toDuration(min(float64(l.median), c))
	}
	mu, s := math.Log(float64(l.median)), l.sigma
	z := (math.Log(c) - mu) / s
	// The body term is computed in log space because e^(σ²/2) alone
	// overflows long before the product does.
	body := 0.0
	if phi := normCDF(z - s); phi > 0 {
		body = math.Exp(mu + s*s/2 + math.Log(phi))
	}
	return toDuration(body + c*normCDF(-z))
}
func (l lognormalDist) String() string {
	return "lognormal:" + l.median.String() + "," + formatFloat(l.sigma)
}

func normCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

type paretoDist struct {
	min   time.Duration
	alpha float64
}

// Sample inverts the CDF: MIN·U^(−1/α) = MIN·e^(E/α) with E ~ Exp(1), which
// also avoids U = 0.
func (p paretoDist) Sample(rng *rand.Rand) time.Duration {
	return toDuration(float64(p.min) * math.Exp(rng.ExpFloat64()/p.alpha))
}

// Mean is E[min(X, c)] = MIN·(1 + L·(e^((1−α)L) − 1)/((1−α)L)) with
// L = ln(c/MIN), which is finite for every α and continuous through α = 1.
func (p paretoDist) Mean() time.Duration {
	m := float64(p.min)
	l := math.Log(float64(MaxSample) / m)
	return toDuration(m * (1 + l*expm1Over((1-p.alpha)*l)))
}
func (p paretoDist) String() string {
	return "pareto:" + p.min.String() + "," + formatFloat(p.alpha)
}
