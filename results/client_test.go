package results

import (
	"reflect"
	"strings"
	"testing"
)

func TestMergeClientSumsGenerators(t *testing.T) {
	gen := func(id string, i int, c *Client) *Result {
		r := fixture(t, id, fixtureOpts{generatorID: i, generators: 2})
		r.Client = c
		return r
	}
	for _, tc := range []struct {
		name string
		a, b *Client
		want *Client
	}{
		{"both measured", &Client{CPUUS: 3000}, &Client{CPUUS: 1000}, &Client{CPUUS: 4000}},
		{"one unmeasured", &Client{CPUUS: 3000}, &Client{Unavailable: "no getrusage"}, &Client{CPUUS: 3000, Unavailable: "no getrusage"}},
		{"one without a reading", &Client{CPUUS: 3000}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := gen("gen-0", 0, tc.a), gen("gen-1", 1, tc.b)
			m, err := Merge([]*Result{a, b})
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == nil {
				if m.Client != nil {
					t.Fatalf("merged client %+v, want none: a generator had no reading", m.Client)
				}
				return
			}
			want := *tc.want
			want.SetPerAcquire(m.Contention.Acquired)
			if m.Client == nil || !reflect.DeepEqual(*m.Client, want) || want.CPUUSPerAcquire == nil {
				t.Fatalf("merged client %+v, want %+v", m.Client, want)
			}
		})
	}
}

func TestMetricClient(t *testing.T) {
	r := fixture(t, "r", fixtureOpts{})
	if _, err := Metric(r, "client.cpu_us_per_acquire"); err == nil || !strings.Contains(err.Error(), "no client figures") {
		t.Fatalf("a run without a reading: %v, want an error", err)
	}
	r.Client = &Client{CPUUS: 5000}
	r.Client.SetPerAcquire(100)
	if v, err := Metric(r, "client.cpu_us_per_acquire"); err != nil || v != 50 {
		t.Fatalf("client.cpu_us_per_acquire = %v, %v; want 50", v, err)
	}
	r.Client.Unavailable = "getrusage: not supported"
	if _, err := Metric(r, "client.cpu_us_per_acquire"); err == nil || !strings.Contains(err.Error(), "not supported") {
		t.Fatalf("an unmeasured run: %v, want its reason", err)
	}
	if _, err := ParseAssertion("client.cpu_per_acquire<5"); err == nil {
		t.Fatal("an unknown client field accepted")
	}
	if _, err := ParseAssertion("client.cpu_us_per_acquire<50"); err != nil {
		t.Fatalf("client cpu assertion refused: %v", err)
	}
}
