package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/bench/history"
)

// writeHistory writes a two-section history on key 3: the second holder is
// granted at grant2 while the first (valid to 100 ms) is still inside.
func writeHistory(t *testing.T, grant2 time.Duration) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "h.jsonl.gz")
	w, err := history.Create(path, history.Header{RunID: "r", Origin: time.Now(), Lock: "single", TTLNS: int64(100 * time.Millisecond),
		DriftNS: int64(3 * time.Millisecond), Resource: "in-process"}, 2)
	if err != nil {
		t.Fatal(err)
	}
	ms := int64(time.Millisecond)
	g2 := int64(grant2)
	out := history.OutOverrun
	if g2 < 97*ms {
		out = history.OutDoubleGrant
	}
	a, b := w.Buffer(0), w.Buffer(1)
	a.Add(history.Event{Key: 3, Op: history.OpEnter, Out: history.OutOK, Window: true, Call: 1, Return: 1, Granted: 0, Valid: 100 * ms, Token: "a", Seq: 1})
	b.Add(history.Event{Key: 3, Op: history.OpEnter, Out: out, Window: true, Call: g2 + 1, Return: g2 + 1, Granted: g2, Valid: g2 + 100*ms, Token: "b", Seq: 2})
	a.Add(history.Event{Key: 3, Op: history.OpExit, Out: history.OutOK, Window: true, Call: 200 * ms, Return: 200 * ms, Token: "a", Seq: 3})
	b.Add(history.Event{Key: 3, Op: history.OpExit, Out: history.OutOK, Window: true, Call: 210 * ms, Return: 210 * ms, Token: "b", Seq: 4})
	if err := w.Close([]history.Fault{{Spec: "at=0s kill primary", StartNS: 40 * ms}}, history.Trailer{WindowEndNS: 300 * ms}); err != nil {
		t.Fatal(err)
	}
	return path
}

// writeHotKey writes a safe history of 3,000 critical sections one after
// another on key 7: twelve Porcupine segments, so that with a budget of a
// nanosecond the key's search runs out of it, whatever the machine (the
// first segment spends more than that, and the rest are not searched).
func writeHotKey(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "hot.jsonl.gz")
	w, err := history.Create(path, history.Header{RunID: "h", Origin: time.Now(), Lock: "single", TTLNS: int64(100 * time.Millisecond),
		DriftNS: int64(3 * time.Millisecond), Resource: "in-process"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	ms := int64(time.Millisecond)
	b := w.Buffer(0)
	for i := range int64(3000) {
		at, tok := i*10*ms, fmt.Sprint("t", i)
		b.Add(history.Event{Key: 7, Op: history.OpAcquire, Out: history.OutOK, Window: true, Call: at, Return: at + 1, Valid: at + 100*ms, Token: tok})
		for j, op := range []history.Op{history.OpEnter, history.OpWrite, history.OpExit} {
			e := history.Event{Key: 7, Op: op, Out: history.OutOK, Window: true, Call: at + 2 + int64(j), Return: at + 2 + int64(j), Token: tok,
				Seq: uint64(i*3) + uint64(j) + 1, Valid: at + 100*ms}
			if op == history.OpEnter {
				e.Granted = at + 1
			}
			if op == history.OpExit {
				e.Valid = 0
			}
			b.Add(e)
		}
		b.Add(history.Event{Key: 7, Op: history.OpRelease, Out: history.OutOK, Window: true, Call: at + 6, Return: at + 7, Token: tok})
	}
	if err := w.Close(nil, history.Trailer{WindowEndNS: 3000 * 10 * ms}); err != nil {
		t.Fatal(err)
	}
	return path
}

// writeEdited writes a history whose resource saw no overlap on key 5:
// worker 0 left at 40 ms, worker 1 entered at 51 ms. The lock's calls tell
// more: worker 0's release came at 90 ms, its lease valid to 100 ms, and
// worker 1's acquire returned at 50 ms. edit changes the events first.
func writeEdited(t *testing.T, edit func(evs []history.Event)) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "e.jsonl.gz")
	w, err := history.Create(path, history.Header{RunID: "e", Origin: time.Now(), Lock: "single", TTLNS: int64(100 * time.Millisecond),
		DriftNS: int64(3 * time.Millisecond), Resource: "in-process"}, 2)
	if err != nil {
		t.Fatal(err)
	}
	ms := int64(time.Millisecond)
	evs := []history.Event{
		{Worker: 0, Op: history.OpAcquire, Call: 0, Return: 1 * ms, Valid: 100 * ms, Token: "a"},
		{Worker: 0, Op: history.OpEnter, Call: 1*ms + 1, Return: 1*ms + 1, Granted: 1 * ms, Valid: 100 * ms, Token: "a", Seq: 1},
		{Worker: 0, Op: history.OpExit, Call: 40 * ms, Return: 40 * ms, Token: "a", Seq: 2},
		{Worker: 0, Op: history.OpRelease, Call: 90 * ms, Return: 91 * ms, Token: "a"},
		{Worker: 1, Op: history.OpAcquire, Call: 45 * ms, Return: 50 * ms, Valid: 150 * ms, Token: "b"},
		{Worker: 1, Op: history.OpEnter, Call: 51 * ms, Return: 51 * ms, Granted: 50 * ms, Valid: 150 * ms, Token: "b", Seq: 3},
		{Worker: 1, Op: history.OpExit, Call: 120 * ms, Return: 120 * ms, Token: "b", Seq: 4},
		{Worker: 1, Op: history.OpRelease, Call: 130 * ms, Return: 131 * ms, Token: "b"},
	}
	for i := range evs {
		evs[i].Key, evs[i].Out, evs[i].Window = 5, history.OutOK, true
	}
	edit(evs)
	for _, e := range evs {
		w.Buffer(e.Worker).Add(e)
	}
	if err := w.Close(nil, history.Trailer{WindowEndNS: 300 * ms}); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCheckCommandReadsTheLocksCalls: an acquire moved inside another's
// lease with the resource's events untouched, and a release moved after it,
// are caught with exit 4 and the acquire named.
func TestCheckCommandReadsTheLocksCalls(t *testing.T) {
	inside := writeEdited(t, func([]history.Event) {})
	released := writeEdited(t, func(evs []history.Event) {
		evs[3].Call, evs[3].Return = 41*int64(time.Millisecond), 42*int64(time.Millisecond)
	})
	// Worker 1's acquire called at 0.5 ms, before worker 0's returned: the
	// two were in flight together, and at 50 ms both had returned ok with
	// neither lease ended nor released, so both held key 5 at once from
	// then on, whichever the service granted first.
	inFlight := writeEdited(t, func(evs []history.Event) { evs[4].Call = int64(time.Millisecond) / 2 })
	for _, tc := range []struct {
		name string
		path string
		code int
		want []string
	}{
		{"acquires in flight together, both held after the later return", inFlight, 4, []string{"UNSAFE: 1 double grant(s)",
			"g0/w1 acquire → ok at 0.050000s, called 0.000500s"}},
		{"acquire inside another's lease", inside, 4, []string{"UNSAFE: 1 double grant(s)", "double grants only the lock's calls show (1",
			"key 5 (generator 0): g0/w1 acquire → ok at 0.050000s", "inside the lease of g0/w0 acquire"}},
		{"released first: safe", released, 0, []string{"SAFE"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := lockbench(t, "check", tc.path)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tc.code, out, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

func TestCheckCommand(t *testing.T) {
	dir := t.TempDir()
	safe := filepath.Join(dir, "safe.jsonl.gz")
	w, err := history.Create(safe, history.Header{RunID: "s", Origin: time.Now(), Resource: "in-process"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	w.Buffer(0).Add(history.Event{Key: 1, Op: history.OpEnter, Out: history.OutOK, Window: true, Call: 1, Return: 1, Valid: 9, Token: "a", Seq: 1})
	if err := w.Close(nil, history.Trailer{}); err != nil {
		t.Fatal(err)
	}
	doubleGrant := writeHistory(t, 50*time.Millisecond)
	overrun := writeHistory(t, 120*time.Millisecond)
	hot := writeHotKey(t)
	html := filepath.Join(dir, "v.html")
	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"safe", []string{safe}, 0, []string{"SAFE", "double grants"}},
		{"double grant", []string{"--visualize", html, doubleGrant}, 4, []string{"UNSAFE: 1 double grant(s)", "key 3", "double grant: g0/w1 enter", "inside: g0/w0 enter"}},
		{"overrun", []string{overrun}, 4, []string{"UNSAFE: 1 overrun(s)"}},
		{"a larger drift allowance makes the grant legal", []string{"--drift", "60ms", doubleGrant}, 4, []string{"UNSAFE: 1 overrun(s)", "allowance 60ms"}},
		{"json", []string{"--format", "json", doubleGrant}, 4, []string{`"double_grants": 1`, `"safe": false`}},
		{"a search out of its budget: unknown, exit 5", []string{"--timeout", "1ns", hot}, 5, []string{"UNKNOWN", "key 7", "linearizability: Unknown"}},
		{"unknown in json", []string{"--timeout", "1ns", "--format", "json", hot}, 5, []string{`"verdict": "unknown"`, `"safe": false`,
			`"unknown_keys": [`, `"key": 7`}},
		{"the same history with a budget: safe", []string{hot}, 0, []string{"SAFE"}},
		{"negative timeout", []string{"--timeout", "-1s", safe}, 2, nil},
		{"no file", nil, 2, nil},
		{"missing file", []string{filepath.Join(dir, "none")}, 2, nil},
		{"not a history", []string{html}, 2, nil},
		{"bad drift", []string{"--drift", "soon", safe}, 2, nil},
		{"bad format", []string{"--format", "xml", safe}, 2, nil},
		{"a flag after the files", []string{safe, "--visualize", html}, 2, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := lockbench(t, append([]string{"check"}, tc.args...)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tc.code, out, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			if tc.code == 2 && strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
				t.Errorf("bad input should be one line, got:\n%s", errOut)
			}
		})
	}
	b, err := os.ReadFile(html)
	if err != nil || !strings.Contains(string(b), "kill primary") || !strings.Contains(string(b), "key 3") {
		t.Fatalf("visualization lacks the fault or the key: %v", err)
	}
}
