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

// FuzzParseEventLine: on any line, the fast parser either leaves it to
// the slow path or reads exactly what encoding/json reads (its integers
// are parsed by hand: a leading zero, "-0", 19 digits and overflow are
// the edges).
func FuzzParseEventLine(f *testing.F) {
	e := Event{Generator: 1, Worker: 2, Key: 3, Op: OpWrite, Out: OutOK, Window: true, Call: 10, Return: 12, Token: "t1", Fence: 4, Valid: 99, Seq: 5}
	f.Add(string(AppendEvent(nil, &e)))
	for _, n := range []string{"0", "-0", "01", "-01", "-", "9223372036854775807", "-9223372036854775808", "9223372036854775808",
		"999999999999999999", "1000000000000000000", "-1000000000000000000", "00"} {
		f.Add(`{"g":0,"w":0,"key":` + n + `,"op":"enter","out":"ok","win":true,"call":` + n + `,"ret":1,"seq":` + n + `}`)
	}
	f.Fuzz(func(t *testing.T, line string) {
		var fast Event
		if !parseEvent([]byte(line), &fast, &tokenCache{}) {
			return
		}
		var l rawLine
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("the fast parser took what json refuses: %s: %v", line, err)
		}
		slow, err := l.event()
		if err != nil {
			t.Fatalf("the fast parser took what json refuses: %s: %v", line, err)
		}
		if fast != slow {
			t.Fatalf("fast %+v, json %+v: %s", fast, slow, line)
		}
	})
}
