package workloads

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestParseKeys(t *testing.T) {
	good := []struct{ spec, want string }{
		{"unique", "unique"},
		{"UNIQUE", "unique"},
		{"0", "unique"},
		{" unique ", "unique"},
		{"1", "uniform:1"},
		{"16", "uniform:16"},
		{"uniform:16", "uniform:16"},
		{"uniform: 16 ", "uniform:16"},
		{"uniform:1000000000", "uniform:1000000000"},
		{"zipf:10000,1.1", "zipf:10000,1.1"},
		{"zipf:1,2", "zipf:1,2"},
		{"zipf:10, 1.5", "zipf:10,1.5"},
		{"zipf:10,1e2", "zipf:10,100"},
		{"hot:1000,0.5", "hot:1000,0.5"},
		{"hot:1,0", "hot:1,0"},
		{"hot:10,1", "hot:10,1"},
		{"Hot:10,.25", "hot:10,0.25"},
	}
	for _, tc := range good {
		c, err := ParseKeys(tc.spec)
		if err != nil {
			t.Errorf("ParseKeys(%q): %v", tc.spec, err)
			continue
		}
		if got := c.String(); got != tc.want {
			t.Errorf("ParseKeys(%q).String() = %q, want %q", tc.spec, got, tc.want)
		}
	}

	bad := []struct{ spec, why string }{
		{"", "empty"},
		{"  ", "empty"},
		{"-1", "K must be from 1"},
		{"1000000001", "K must be from 1"},
		{"unique:3", "takes no arguments"},
		{"uniform", "not an integer"},
		{"uniform:", "not an integer"},
		{"uniform:0", "K must be from 1"},
		{"uniform:x", "not an integer"},
		{"uniform:1.5", "not an integer"},
		{"zipf:10", "needs K,s"},
		{"zipf:10,0.5", "s must be > 1"},
		{"zipf:10,1", "s must be > 1"},
		{"zipf:10,NaN", "not a number"},
		{"zipf:10,inf", "not a number"},
		{"zipf:0,1.5", "K must be from 1"},
		{"zipf:10,100.5", "at most 100"},
		{"zipf:10,1e300", "at most 100"},
		{"hot:10", "needs K,p"},
		{"hot:10,1.5", "p must be from 0 to 1"},
		{"hot:10,-0.1", "p must be from 0 to 1"},
		{"hot:10,x", "not a number"},
		{"hot:0,0.5", "K must be from 1"},
		{"gauss:10", "unknown chooser"},
	}
	for _, tc := range bad {
		_, err := ParseKeys(tc.spec)
		if err == nil {
			t.Errorf("ParseKeys(%q) succeeded, want error containing %q", tc.spec, tc.why)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, tc.why) || !strings.HasPrefix(msg, "keys ") ||
			!strings.HasSuffix(msg, "want "+KeysHelp) || strings.Contains(msg, "\n") {
			t.Errorf("ParseKeys(%q) error = %q, want one line naming keys, %q and the accepted forms", tc.spec, msg, tc.why)
		}
	}
}

func TestParseKeysErrorExample(t *testing.T) {
	_, err := ParseKeys("zipf:10,0.5")
	want := `keys "zipf:10,0.5": s must be > 1; want unique, uniform:K, zipf:K,s (s > 1) or hot:K,p`
	if err == nil || err.Error() != want {
		t.Fatalf("error = %v, want %s", err, want)
	}
}

func TestIsUnique(t *testing.T) {
	for spec, want := range map[string]bool{"unique": true, "0": true, "1": false, "hot:1,1": false, "zipf:5,2": false} {
		c, err := ParseKeys(spec)
		if err != nil {
			t.Fatal(err)
		}
		if got := IsUnique(c); got != want {
			t.Errorf("IsUnique(%s) = %v, want %v", spec, got, want)
		}
	}
	if IsUnique(nil) {
		t.Error("IsUnique(nil) = true")
	}
}

func mustKeys(t testing.TB, spec string) KeyChooser {
	t.Helper()
	c, err := ParseKeys(spec)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func testRNG() *rand.Rand { return rand.New(rand.NewPCG(1, 2)) }

// shares draws n keys and returns how often each index in 0..k-1 came up.
func shares(t *testing.T, c KeyChooser, k, n int) []float64 {
	t.Helper()
	rng := testRNG()
	counts := make([]float64, k)
	for i := 0; i < n; i++ {
		key := c.Key(i%7, rng)
		if key < 0 || key >= k {
			t.Fatalf("%v: key %d outside 0..%d", c, key, k-1)
		}
		counts[key]++
	}
	for i := range counts {
		counts[i] /= float64(n)
	}
	return counts
}

func TestUniqueKeys(t *testing.T) {
	c := mustKeys(t, "unique")
	rng := testRNG()
	for w := 0; w < 100; w++ {
		if got := c.Key(w, rng); got != w {
			t.Fatalf("Key(%d) = %d, want the worker index", w, got)
		}
	}
}

func TestUniformKeysShares(t *testing.T) {
	const k, n = 10, 200_000
	for i, s := range shares(t, mustKeys(t, "uniform:10"), k, n) {
		if math.Abs(s-0.1)/0.1 > 0.05 {
			t.Errorf("key %d share %.4f, want 0.1 within 5%%", i, s)
		}
	}
}

func TestHotKeysShare(t *testing.T) {
	const n = 200_000
	for _, tc := range []struct {
		spec string
		k    int
		p    float64
	}{{"hot:100,0.3", 100, 0.3}, {"hot:1000,0.5", 1000, 0.5}, {"hot:50,0", 50, 0}, {"hot:50,1", 50, 1}} {
		sh := shares(t, mustKeys(t, tc.spec), tc.k, n)
		// Key 0 is also reachable through the uniform branch.
		want := tc.p + (1-tc.p)/float64(tc.k)
		if math.Abs(sh[0]-want) > 0.01*want {
			t.Errorf("%s: hot share %.4f, want %.4f within 1%%", tc.spec, sh[0], want)
		}
		if tc.p < 1 {
			cold := (1 - tc.p) / float64(tc.k)
			if math.Abs(sh[tc.k-1]-cold) > 0.25*cold+0.001 {
				t.Errorf("%s: cold key share %.5f, want about %.5f", tc.spec, sh[tc.k-1], cold)
			}
		}
	}
}

// harmonic is H(K,s) = Σ_{i=1..K} i^-s, summed smallest first for accuracy.
func harmonic(k int, s float64) float64 {
	h := 0.0
	for i := k; i >= 1; i-- {
		h += math.Pow(float64(i), -s)
	}
	return h
}

func TestZipfKeysShares(t *testing.T) {
	const n = 200_000
	for _, tc := range []struct {
		k int
		s float64
	}{{10000, 1.1}, {10, 1.5}, {1000, 2}, {10_000_000, 1.2}, {100, 1.0001}, {50, 8}} {
		c := newZipfKeys(tc.k, tc.s)
		rng := testRNG()
		var c0, c1 float64
		for i := 0; i < n; i++ {
			key := c.Key(0, rng)
			if key < 0 || key >= tc.k {
				t.Fatalf("%v: key %d outside 0..%d", c, key, tc.k-1)
			}
			switch key {
			case 0:
				c0++
			case 1:
				c1++
			}
		}
		h := harmonic(tc.k, tc.s)
		want0, want1 := 1/h, math.Pow(2, -tc.s)/h
		if got := c0 / n; math.Abs(got-want0) > 0.03*want0 {
			t.Errorf("%v: key 0 share %.4f, want 1/H = %.4f within 3%%", c, got, want0)
		}
		// Key 1 is checked too so that a sampler stuck on key 0 cannot pass.
		if got := c1 / n; want1*n > 1000 && math.Abs(got-want1) > 0.05*want1 {
			t.Errorf("%v: key 1 share %.4f, want %.4f within 5%%", c, got, want1)
		}
	}
}

// TestZipfKeysExtremes samples at the edges of the accepted exponents: a NaN
// in the sampler's constants would loop forever or leave the key range.
func TestZipfKeysExtremes(t *testing.T) {
	rng := testRNG()
	for _, k := range []int{1, 2, 3, 1000, MaxKeys} {
		for _, s := range []float64{math.Nextafter(1, 2), 1 + 1e-12, 1 + 1e-6, 1.01, 3, 50, maxZipfS} {
			c := newZipfKeys(k, s)
			if !c.valid() {
				t.Fatalf("%v: sampler constants %+v are unusable", c, c)
			}
			for i := 0; i < 2000; i++ {
				if key := c.Key(0, rng); key < 0 || key >= k {
					t.Fatalf("%v: key %d outside 0..%d", c, key, k-1)
				}
			}
		}
	}
}

func FuzzParseKeys(f *testing.F) {
	for _, s := range []string{"unique", "0", "7", "uniform:16", "zipf:10000,1.1", "zipf:3,1e300",
		"hot:1000,0.5", "hot:1,1", "hot:10,-0", "uniform:-3", "zipf:10,0x1p+1", ":", "zipf:,", "hot:5,1e-320"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		c, err := ParseKeys(spec)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error: %q", err)
			}
			return
		}
		again, err := ParseKeys(c.String())
		if err != nil {
			t.Fatalf("ParseKeys(%q) ok as %q, which does not parse: %v", spec, c, err)
		}
		if again.String() != c.String() {
			t.Fatalf("round trip %q -> %q -> %q", spec, c, again)
		}
		rng := testRNG()
		for i := 0; i < 8; i++ {
			key := c.Key(i, rng)
			if IsUnique(c) {
				if key != i {
					t.Fatalf("%v: Key(%d) = %d", c, i, key)
				}
				continue
			}
			if key < 0 || key >= MaxKeys {
				t.Fatalf("%v: key %d out of range", c, key)
			}
		}
	})
}

func BenchmarkKeyChoosers(b *testing.B) {
	for _, spec := range []string{"unique", "uniform:1000", "zipf:10000,1.1", "zipf:10000000,1.01", "hot:1000,0.5"} {
		c := mustKeys(b, spec)
		b.Run(spec, func(b *testing.B) {
			rng := testRNG()
			b.ReportAllocs()
			sink := 0
			for i := 0; b.Loop(); i++ {
				sink += c.Key(i, rng)
			}
			_ = sink
		})
	}
}
