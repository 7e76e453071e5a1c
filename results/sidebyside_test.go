package results

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// sideBySideRuns are single, redlock:3 and redlock:5 on local servers,
// generated on a host with cpus CPUs.
func sideBySideRuns(t *testing.T, cpus int, provider string) []*Result {
	t.Helper()
	var rs []*Result
	for i, spec := range []struct {
		name  string
		nodes int
		slow  float64
	}{{"single", 1, 1}, {"redlock:3", 3, 2.8}, {"redlock:5", 5, 4.5}} {
		r := fixture(t, "run-"+spec.name, fixtureOpts{slow: spec.slow, servers: true, repeat: i})
		r.Topology.Spec, r.Topology.Provider = spec.name, provider
		r.Topology.Nodes = make([]string, spec.nodes)
		if spec.nodes > 1 {
			r.Topology.Kind = "redlock"
			r.Lock = LockInfo{Name: "redlock", Nodes: spec.nodes}
		}
		r.Hosts = []Host{{Name: "gen-0", CPUs: cpus, GOMAXPROCS: cpus, OS: "linux", Arch: "amd64", GoVersion: "go1.26", Build: "devel"}}
		rs = append(rs, r)
	}
	return rs
}

func TestWriteSideBySide(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteSideBySide(&buf, sideBySideRuns(t, 2, "local")); err != nil {
		t.Fatal(err)
	}
	golden(t, "sidebyside.txt", buf.Bytes())
}

func TestSharedCPUNote(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cpus     int
		provider string
		want     string // "" means no note
	}{
		{name: "two CPUs: the masters crowd the client", cpus: 2, provider: "local", want: "note: redlock:3 (3 servers), redlock:5 (5 servers) shared the generator's 2 CPUs"},
		{name: "four CPUs: only redlock:5 crowds", cpus: 4, provider: "local", want: "note: redlock:5 (5 servers) shared the generator's 4 CPUs"},
		{name: "containers share the host too", cpus: 4, provider: "docker", want: "note: redlock:5 (5 servers)"},
		{name: "enough CPUs for all", cpus: 8, provider: "local"},
		{name: "external servers have their own hosts", cpus: 2, provider: "external"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := SharedCPUNote(sideBySideRuns(t, tc.cpus, tc.provider))
			if tc.want == "" && got != "" || !strings.HasPrefix(got, tc.want) {
				t.Errorf("note = %q, want prefix %q", got, tc.want)
			}
		})
	}
	t.Run("results without hosts (older files) get no note", func(t *testing.T) {
		rs := sideBySideRuns(t, 2, "local")
		for _, r := range rs {
			r.Hosts = nil
		}
		if got := SharedCPUNote(rs); got != "" {
			t.Errorf("note = %q, want none", got)
		}
	})
}

// A topology whose servers refused INFO has no server figures: the table must
// say so with "n/a" rather than print 0.00 and 0.00x as if measured.
func TestWriteSideBySideINFORefused(t *testing.T) {
	rs := sideBySideRuns(t, 8, "external")
	rs[2].Servers = &Servers{Unavailable: "INFO on 127.0.0.1:7005: ERR unknown command"}
	rs[1].Servers = nil
	var buf bytes.Buffer
	if err := WriteSideBySide(&buf, rs); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(buf.String(), "\n") {
		if !strings.Contains(line, "redlock:") {
			continue
		}
		cells := strings.Split(line, "|")
		// cells: "", topology, lock, acq/s, p50, p99, cmds, cpu, ""
		for _, i := range []int{6, 7} {
			if got := strings.TrimSpace(cells[i]); got != "n/a" {
				t.Errorf("%s: column %d = %q, want n/a", strings.TrimSpace(cells[1]), i, got)
			}
		}
	}
}

// Repeats of each topology make one row each, of medians: the table compares
// topologies, not repeats.
func TestWriteSideBySideGroups(t *testing.T) {
	var groups []Group
	for _, spec := range []string{"single", "redlock:3"} {
		g := Group{Key: spec}
		for i, thr := range []float64{900, 1000, 5000} {
			r := fixture(t, fmt.Sprintf("%s-%d", spec, i), fixtureOpts{servers: true, repeat: i})
			r.Topology.Spec = spec
			if spec != "single" {
				thr /= 4
			}
			r.Throughput.AcquiredPerS = thr
			g.Runs = append(g.Runs, r)
		}
		groups = append(groups, g)
	}
	var buf bytes.Buffer
	if err := WriteSideBySideGroups(&buf, groups, nil); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	rows := 0
	for _, line := range strings.Split(out, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 8 || strings.TrimSpace(cells[3]) == "acq/s" {
			continue
		}
		rows++
		if got := strings.TrimSpace(cells[3]); got != map[string]string{"single": "1000 ±400%", "redlock:3": "250 ±400% (~)"}[strings.TrimSpace(cells[1])] {
			t.Errorf("%s: throughput %q, want the medians 1000 and 250, within noise of each other", strings.TrimSpace(cells[1]), got)
		}
	}
	if rows != 2 {
		t.Fatalf("%d rows, want one per topology:\n%s", rows, out)
	}
	if !strings.Contains(out, "(each row: the median of its 3 runs ±their spread)") {
		t.Errorf("table does not say how many runs each row is the median of:\n%s", out)
	}
	if !strings.Contains(out, " 1000 ±400% |") || !strings.Contains(out, " 250 ±400% (~) |") {
		t.Errorf("throughput is not the median of the repeats:\n%s", out)
	}
}
