package history

import (
	"encoding/json"
	"testing"
)

// FuzzParseEvent: the fast parser takes every line AppendEvent writes and
// reads it back as encoding/json does; a line it does not take goes to the
// slow path, and one it takes never differs from what json makes of it.
func FuzzParseEvent(f *testing.F) {
	f.Add(0, 3, 17, uint8(OpEnter), uint8(OutOK), true, int64(10), int64(12), "0123456789abcdef", int64(0), int64(99), int64(7), uint64(4), "")
	f.Add(1, 0, 2, uint8(OpAcquire), uint8(OutFailed), false, int64(-5), int64(0), "", int64(3), int64(0), int64(0), uint64(0), "timeout")
	f.Add(0, 0, 0, uint8(OpWrite), uint8(OutStaleAccepted), true, int64(1), int64(2), `to"k\n`, int64(1), int64(2), int64(0), uint64(9), "é")
	f.Fuzz(func(t *testing.T, g, w, key int, op, out uint8, win bool, call, ret int64, token string, fence, valid, granted int64, seq uint64, errKind string) {
		e := Event{Generator: g, Worker: w, Key: key, Op: Op(op%9 + 1), Out: Outcome(out%8 + 1), Window: win, Call: call, Return: ret, Token: token,
			Fence: fence, Valid: valid, Granted: granted, Seq: seq & (1<<63 - 1), Err: errKind}
		if e.Op != OpEnter {
			e.Granted = 0
		}
		line := AppendEvent(nil, &e)
		line = line[:len(line)-1]
		var fast Event
		took := parseEvent(line, &fast, &tokenCache{})
		var l rawLine
		if err := json.Unmarshal(line, &l); err != nil {
			t.Fatalf("AppendEvent wrote what json cannot read: %s: %v", line, err)
		}
		slow, err := l.event()
		if err != nil {
			t.Fatal(err)
		}
		if slow != e {
			// Invalid UTF-8 in a string: json replaces it; not a line a run writes.
			return
		}
		if took && fast != slow {
			t.Fatalf("fast %+v, json %+v: %s", fast, slow, line)
		}
		if !took && (e.Token == "" || isPlain(e.Token)) && (e.Err == "" || isPlain(e.Err)) {
			t.Fatalf("the fast parser refused a plain line: %s", line)
		}
	})
}

func isPlain(s string) bool {
	for i := range len(s) {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}
