package main

import (
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
