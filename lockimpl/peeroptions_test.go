package lockimpl_test

import (
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/lockimpl"
)

func TestParsePeerOptions(t *testing.T) {
	redsyncDefaults := lockimpl.DefaultPeerOptions("redsync")
	with := func(o lockimpl.PeerOptions, f func(*lockimpl.PeerOptions)) lockimpl.PeerOptions { f(&o); return o }
	for _, tc := range []struct {
		lock  string
		specs []string
		want  lockimpl.PeerOptions
		// errHas are the words a refusal must contain: the option, and what is accepted.
		errHas []string
	}{
		{lock: "redsync", want: redsyncDefaults},
		{lock: "redsync", specs: []string{"tries=32", "retry-delay=10ms"},
			want: with(redsyncDefaults, func(o *lockimpl.PeerOptions) { o.Tries, o.RetryDelay = 32, 10*time.Millisecond })},
		{lock: "redsync", specs: []string{"tries=32"}, want: with(redsyncDefaults, func(o *lockimpl.PeerOptions) { o.Tries = 32 })},
		{lock: "redsync", specs: []string{"fail-fast", "set-nx-on-extend=true", "shuffle-pools=false", " drift-factor = 0", "timeout-factor=0.5"},
			want: with(redsyncDefaults, func(o *lockimpl.PeerOptions) {
				o.FailFast, o.SetNXOnExtend, o.DriftFactor, o.TimeoutFactor = true, true, 0, 0.5
			})},
		{lock: "redislock", specs: []string{"metadata=job-42"}, want: lockimpl.PeerOptions{Tries: 1, Metadata: "job-42"}},
		{lock: "redislock", specs: []string{"tries=3", "retry-delay=5ms"}, want: lockimpl.PeerOptions{Tries: 3, RetryDelay: 5 * time.Millisecond}},
		{lock: "single"},

		{lock: "redsync", specs: []string{"tries=0"}, errHas: []string{`"tries=0"`, "1 to 1000"}},
		{lock: "redsync", specs: []string{"tries"}, errHas: []string{`"tries"`, "tries=N"}},
		{lock: "redsync", specs: []string{"bogus=1"}, errHas: []string{`"bogus=1"`, "unknown", "tries=N", "fail-fast"}},
		{lock: "redsync", specs: []string{"expiry-factor=0.05"}, errHas: []string{"expiry-factor", "--ttl", "timeout-factor"}},
		{lock: "redsync", specs: []string{"metadata=x"}, errHas: []string{"metadata", "redislock's"}},
		{lock: "redislock", specs: []string{"fail-fast"}, errHas: []string{"fail-fast", "redsync's", "metadata=TEXT"}},
		{lock: "redsync", specs: []string{"retry-delay=10ms"}, errHas: []string{"retry-delay", "tries=N"}},
		{lock: "redislock", specs: []string{"tries=3"}, errHas: []string{"tries=3", "retry-delay"}},
		{lock: "redsync", specs: []string{"tries=2", "tries=3"}, errHas: []string{"tries=3", "twice"}},
		{lock: "redsync", specs: []string{"drift-factor=1"}, errHas: []string{"drift-factor=1", "0 ≤ F < 1"}},
		{lock: "redsync", specs: []string{"drift-factor=NaN"}, errHas: []string{"drift-factor=NaN"}},
		{lock: "redsync", specs: []string{"timeout-factor=0"}, errHas: []string{"timeout-factor=0", "0 < F ≤ 1"}},
		{lock: "redsync", specs: []string{"fail-fast=maybe"}, errHas: []string{"fail-fast=maybe", "switch"}},
		{lock: "redsync", specs: []string{"token=abc"}, errHas: []string{"token", "128-bit"}},
		{lock: "redislock", specs: []string{"metadata=" + strings.Repeat("x", 5000)}, errHas: []string{"5000 bytes", "4096"}},
		{lock: "single", specs: []string{"tries=2"}, errHas: []string{`lock "single" takes no peer options`, "redsync"}},
	} {
		t.Run(tc.lock+"/"+strings.Join(tc.specs, ","), func(t *testing.T) {
			got, err := lockimpl.ParsePeerOptions(tc.lock, tc.specs)
			if len(tc.errHas) > 0 {
				if err == nil {
					t.Fatalf("accepted as %+v, want refused", got)
				}
				for _, w := range tc.errHas {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not say %q", err, w)
					}
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("error %q is not one line", err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestPeerSettingsShowLibraryDefaults(t *testing.T) {
	o, err := lockimpl.ParsePeerOptions("redsync", []string{"tries=32"})
	if err != nil {
		t.Fatal(err)
	}
	s := o.Settings("redsync")
	for k, want := range map[string]string{"tries": "32", "retry-delay": "random in [50ms, 250ms)", "drift-factor": "0.01", "timeout-factor": "0.05", "fail-fast": "false"} {
		if s[k] != want {
			t.Errorf("settings[%s] = %q, want %q (all: %v)", k, s[k], want, s)
		}
	}
	if _, ok := lockimpl.DefaultPeerOptions("redsync").Settings("redsync")["retry-delay"]; ok {
		t.Error("one try has no retry delay, yet settings show one")
	}
}

// FuzzParsePeerOptions: no input panics; an accepted one renders back to
// --peer-option values that parse to the same options.
func FuzzParsePeerOptions(f *testing.F) {
	for _, seed := range []string{"tries=32", "retry-delay=1.5ms", "fail-fast", "drift-factor=0", "timeout-factor=1e-3", "metadata=a=b", "set-nx-on-extend=false", "tries=+3", "=", ""} {
		f.Add("redsync", seed, "tries=2")
		f.Add("redislock", seed, "retry-delay=1ms")
	}
	f.Fuzz(func(t *testing.T, lock, a, b string) {
		o, err := lockimpl.ParsePeerOptions(lock, []string{a, b})
		if err != nil {
			if strings.Contains(err.Error(), "\n") && !strings.ContainsAny(a+b, "\n") {
				t.Fatalf("error %q is not one line", err)
			}
			return
		}
		again, err := lockimpl.ParsePeerOptions(lock, o.Specs(lock))
		if err != nil || again != o {
			t.Fatalf("%q %q parsed to %+v, rendered as %q, parsed back to %+v (%v)", a, b, o, o.Specs(lock), again, err)
		}
	})
}
