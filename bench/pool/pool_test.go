package pool

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestRoundRunsSideBySide holds every job until Size of them have started:
// a pool that ran them one at a time would never get past the first.
func TestRoundRunsSideBySide(t *testing.T) {
	for _, size := range []int{1, 2, 3} {
		const n = 6
		var mu sync.Mutex
		running, most := 0, 0
		gates := make([]chan struct{}, n)
		for i := range gates {
			gates[i] = make(chan struct{})
		}
		// started counts jobs begun; the size-th of each batch opens the
		// gates of the batch, so every job of it is inside at once.
		started := 0
		out := Round[int]{
			Size: size,
			Run: func(_ context.Context, slot, i int) (int, error) {
				mu.Lock()
				running++
				most = max(most, running)
				started++
				if started%size == 0 {
					for k := started - 1; k >= 0 && k >= started-size; k-- {
						close(gates[k])
					}
				}
				mu.Unlock()
				<-gates[i]
				mu.Lock()
				running--
				mu.Unlock()
				return i * 10, nil
			},
		}.Go(context.Background(), n)
		if most != size {
			t.Errorf("size %d: at most %d jobs at once, want %d", size, most, size)
		}
		for i, o := range out {
			if !o.Ran || o.Value != i*10 || o.Err != nil {
				t.Errorf("size %d: job %d = %+v, want ran with %d", size, i, o, i*10)
			}
		}
	}
}

// TestRoundSlotsRunOneJobAtATime: a slot's jobs never overlap, so a slot
// may own what they share.
func TestRoundSlotsRunOneJobAtATime(t *testing.T) {
	var mu sync.Mutex
	busy := map[int]bool{}
	Round[struct{}]{
		Size: 3,
		Run: func(_ context.Context, slot, _ int) (struct{}, error) {
			mu.Lock()
			if busy[slot] {
				t.Errorf("slot %d runs two jobs at once", slot)
			}
			if slot < 0 || slot >= 3 {
				t.Errorf("slot %d out of 0..2", slot)
			}
			busy[slot] = true
			mu.Unlock()
			mu.Lock()
			busy[slot] = false
			mu.Unlock()
			return struct{}{}, nil
		},
	}.Go(context.Background(), 20)
}

// TestRoundStartsInOrderAndSkips: Start is asked in job order, and a job
// it refuses does not run.
func TestRoundStartsInOrderAndSkips(t *testing.T) {
	var asked []int
	out := Round[int]{
		Size:  2,
		Start: func(i int) bool { asked = append(asked, i); return i != 2 },
		Run:   func(_ context.Context, _, i int) (int, error) { return i, nil },
	}.Go(context.Background(), 5)
	if !slices.Equal(asked, []int{0, 1, 2, 3, 4}) {
		t.Errorf("Start asked %v, want 0..4 in order", asked)
	}
	for i, o := range out {
		if o.Ran != (i != 2) {
			t.Errorf("job %d ran %v", i, o.Ran)
		}
	}
}

// TestRoundStopsButKeepsFinished: after an error, or Ctrl-C, no job
// starts; the jobs running then finish and are kept.
func TestRoundStopsButKeepsFinished(t *testing.T) {
	boom := errors.New("server would not start")
	tests := []struct {
		name string
		// stop is what job 1 does to the round: fail, or cancel.
		fail bool
	}{
		{name: "error", fail: true},
		{name: "ctrl-c", fail: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			oneDone := make(chan struct{})
			var done []int
			out := Round[string]{
				Size: 2,
				Run: func(ctx context.Context, _, i int) (string, error) {
					switch i {
					case 0:
						// Running while job 1 stops the round: it finishes.
						<-oneDone
						return "finished", nil
					case 1:
						defer close(oneDone)
						if tc.fail {
							return "", boom
						}
						cancel()
						return "partial", nil
					}
					return "should not start", nil
				},
				Done: func(i int, _ string, _ error) { done = append(done, i) },
			}.Go(ctx, 6)
			if !out[0].Ran || out[0].Value != "finished" {
				t.Errorf("job 0 = %+v, want finished and kept", out[0])
			}
			for i := 2; i < 6; i++ {
				if out[i].Ran {
					t.Errorf("job %d started after the round was stopped", i)
				}
			}
			if len(done) != 2 {
				t.Errorf("Done told of %v, want jobs 0 and 1", done)
			}
			if err := FirstErr(out); tc.fail != errors.Is(err, boom) {
				t.Errorf("FirstErr = %v", err)
			}
		})
	}
}

func TestMachineFit(t *testing.T) {
	need := TrialNeed()
	tests := []struct {
		name string
		m    Machine
		n    int
		want string // "" fits; else a piece of the refusal
	}{
		{name: "one always fits", m: Machine{Cores: 1, AvailableMB: 100}, n: 1},
		{name: "one a core", m: Machine{Cores: 2, AvailableMB: 20000}, n: 2},
		{name: "zero", m: Machine{Cores: 2, AvailableMB: 20000}, n: 0, want: "--parallel 0: want a whole number of trials at once from 1 to 2"},
		{name: "negative", m: Machine{Cores: 8}, n: -3, want: "from 1 to 8"},
		{name: "cores", m: Machine{Cores: 2, AvailableMB: 20000}, n: 3, want: "3 trials need 3 cores"},
		{name: "memory", m: Machine{Cores: 64, AvailableMB: 1500}, n: 4, want: "4 trials need 2048 MB"},
		{name: "memory unknown", m: Machine{Cores: 64}, n: 40},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.m.Fit(tc.n, need)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("got %v, want it to say %q", err, tc.want)
			case err != nil && strings.Contains(err.Error(), "\n"):
				t.Errorf("refusal is more than one line: %q", err)
			}
		})
	}
}

func TestAvailableMB(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"MemTotal:       24000000 kB\nMemFree:  100 kB\nMemAvailable:   22488624 kB\n", 21961},
		{"MemTotal:       24000000 kB\n", 0},
		{"MemAvailable: lots kB\n", 0},
		{"", 0},
	}
	for _, tc := range tests {
		if got := availableMB(strings.NewReader(tc.in)); got != tc.want {
			t.Errorf("availableMB(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

// FuzzAvailableMB: whatever /proc/meminfo holds, reading it never panics
// and never gives a negative figure.
func FuzzAvailableMB(f *testing.F) {
	f.Add("MemAvailable:   22488624 kB\n")
	f.Add("MemAvailable: -5 kB\n")
	f.Fuzz(func(t *testing.T, in string) {
		if got := availableMB(strings.NewReader(in)); got < 0 {
			t.Errorf("availableMB(%q) = %d", in, got)
		}
	})
}
