package workloads

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// KeysHelp lists the accepted forms of a --keys spec, for help text and errors.
const KeysHelp = "unique, uniform:K, zipf:K,s (s > 1) or hot:K,p"

// MaxKeys bounds K in a --keys spec. Larger key spaces add nothing a
// benchmark can observe (collisions are already negligible), and keeping K
// far below 2^53 keeps the zipf sampler's float arithmetic exact.
const MaxKeys = 1_000_000_000

// maxZipfS bounds the zipf exponent. Beyond it key 0 already takes all but
// 2^-100 of the requests, so nothing observable changes, while the sampler's
// constants start to underflow.
const maxZipfS = 100

// ParseKeys parses a --keys spec:
//
//	unique or 0      one key per worker, so locks never collide
//	uniform:K or K   uniform over keys 0..K-1
//	zipf:K,s         zipf over 0..K-1 with exponent s > 1; key 0 is the most frequent
//	hot:K,p          key 0 with probability p, otherwise uniform over 0..K-1
//
// The chooser it returns holds no mutable state and may be shared by all workers.
func ParseKeys(spec string) (KeyChooser, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("keys %q: %s; want %s", spec, fmt.Sprintf(format, a...), KeysHelp)
	}
	s := strings.TrimSpace(spec)
	if s == "" {
		return nil, bad("empty")
	}
	if isUniqueWord(s) {
		return uniqueKeys{}, nil
	}
	if k, err := strconv.Atoi(s); err == nil {
		if err := checkK(k); err != nil {
			return nil, bad("%v", err)
		}
		return uniformKeys{k: k}, nil
	}
	kind, args, _ := strings.Cut(s, ":")
	switch strings.ToLower(strings.TrimSpace(kind)) {
	case "unique":
		return nil, bad("unique takes no arguments")
	case "uniform":
		k, err := parseK(args)
		if err != nil {
			return nil, bad("%v", err)
		}
		return uniformKeys{k: k}, nil
	case "zipf":
		kS, sS, ok := strings.Cut(args, ",")
		if !ok {
			return nil, bad("zipf needs K,s")
		}
		k, err := parseK(kS)
		if err != nil {
			return nil, bad("%v", err)
		}
		exp, err := parseFinite(sS)
		if err != nil {
			return nil, bad("s %v", err)
		}
		if !(exp > 1) {
			return nil, bad("s must be > 1")
		}
		if exp > maxZipfS {
			return nil, bad("s must be at most %d", maxZipfS)
		}
		z := newZipfKeys(k, exp)
		if !z.valid() {
			return nil, bad("s %v cannot be sampled accurately", exp)
		}
		return z, nil
	case "hot":
		kS, pS, ok := strings.Cut(args, ",")
		if !ok {
			return nil, bad("hot needs K,p")
		}
		k, err := parseK(kS)
		if err != nil {
			return nil, bad("%v", err)
		}
		p, err := parseFinite(pS)
		if err != nil {
			return nil, bad("p %v", err)
		}
		if p < 0 || p > 1 {
			return nil, bad("p must be from 0 to 1")
		}
		return hotKeys{k: k, p: p}, nil
	}
	return nil, bad("unknown chooser %q", kind)
}

// IsUnique reports whether c gives every worker its own key, in which case
// contention figures are meaningless and the runner can say so.
func IsUnique(c KeyChooser) bool {
	_, ok := c.(uniqueKeys)
	return ok
}

func isUniqueWord(s string) bool {
	return s == "0" || strings.EqualFold(s, "unique")
}

func parseK(s string) (int, error) {
	k, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("K %q is not an integer", strings.TrimSpace(s))
	}
	return k, checkK(k)
}

func checkK(k int) error {
	if k < 1 || k > MaxKeys {
		return fmt.Errorf("K must be from 1 to %d", MaxKeys)
	}
	return nil
}

// parseFinite rejects NaN and infinities, which strconv accepts but no
// parameter here can mean.
func parseFinite(s string) (float64, error) {
	s = strings.TrimSpace(s)
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	return f, nil
}

func formatFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

type uniqueKeys struct{}

func (uniqueKeys) Key(worker int, _ *rand.Rand) int { return worker }
func (uniqueKeys) String() string                   { return "unique" }

type uniformKeys struct{ k int }

func (u uniformKeys) Key(_ int, rng *rand.Rand) int { return rng.IntN(u.k) }
func (u uniformKeys) String() string                { return "uniform:" + strconv.Itoa(u.k) }

type hotKeys struct {
	k int
	p float64
}

func (h hotKeys) Key(_ int, rng *rand.Rand) int {
	if rng.Float64() < h.p {
		return 0
	}
	return rng.IntN(h.k)
}

func (h hotKeys) String() string {
	return "hot:" + strconv.Itoa(h.k) + "," + formatFloat(h.p)
}

// zipfKeys samples P(key i) ∝ (i+1)^-s by rejection-inversion (Hörmann and
// Derflinger, 1996), in the numerically stable form of Apache Commons RNG.
// Unlike a CDF table it costs O(1) memory for any K, and unlike rand.Zipf it
// keeps no rng inside, so one value can serve every worker.
type zipfKeys struct {
	k int
	s float64
	// hX1 is hIntegral(1.5) - h(1); hN is hIntegral(K + 0.5). A uniform draw
	// between them inverts to a candidate key.
	hX1, hN float64
	// accept is the squeeze: candidates this close to their key are taken
	// without evaluating h, which is most of them.
	accept float64
}

func newZipfKeys(k int, s float64) zipfKeys {
	z := zipfKeys{k: k, s: s}
	z.hX1 = z.hIntegral(1.5) - 1
	z.hN = z.hIntegral(float64(k) + 0.5)
	z.accept = 2 - z.hIntegralInverse(z.hIntegral(2.5)-z.h(2))
	return z
}

// valid reports whether the precomputed constants are usable; an extreme s
// can underflow them, and a NaN would make the rejection loop spin forever.
func (z zipfKeys) valid() bool {
	for _, f := range []float64{z.hX1, z.hN, z.accept} {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return false
		}
	}
	return z.hX1 < z.hN || z.k == 1
}

func (z zipfKeys) Key(_ int, rng *rand.Rand) int {
	if z.k == 1 {
		return 0
	}
	for {
		u := z.hN + rng.Float64()*(z.hX1-z.hN)
		x := z.hIntegralInverse(u)
		k := math.Floor(x + 0.5)
		if k < 1 {
			k = 1
		} else if k > float64(z.k) {
			k = float64(z.k)
		}
		if k-x <= z.accept || u >= z.hIntegral(k+0.5)-z.h(k) {
			return int(k) - 1
		}
	}
}

func (z zipfKeys) String() string {
	return "zipf:" + strconv.Itoa(z.k) + "," + formatFloat(z.s)
}

// h is the unnormalised probability of rank x (1-based).
func (z zipfKeys) h(x float64) float64 { return math.Exp(-z.s * math.Log(x)) }

// hIntegral is an antiderivative of h, written through log1p/expm1 helpers
// so that it stays accurate as s approaches 1.
func (z zipfKeys) hIntegral(x float64) float64 {
	logX := math.Log(x)
	return expm1Over((1-z.s)*logX) * logX
}

func (z zipfKeys) hIntegralInverse(x float64) float64 {
	t := x * (1 - z.s)
	if t < -1 {
		// Rounding can push t just past the pole of log1p.
		t = -1
	}
	return math.Exp(log1pOver(t) * x)
}

// log1pOver is log1p(x)/x, continuous at 0.
func log1pOver(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Log1p(x) / x
	}
	return 1 - x*(0.5-x*(1.0/3-0.25*x))
}

// expm1Over is expm1(x)/x, continuous at 0.
func expm1Over(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Expm1(x) / x
	}
	return 1 + x*0.5*(1+x*(1.0/3)*(1+0.25*x))
}

// KeysInUse is how many keys a chooser spreads its requests over, and false
// for unique keys (one per worker, so no two workers ever want one key).
func KeysInUse(c KeyChooser) (int, bool) {
	switch k := c.(type) {
	case uniformKeys:
		return k.k, true
	case hotKeys:
		return k.k, true
	case zipfKeys:
		return k.k, true
	}
	return 0, false
}
