package lockimpl

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzParseDriverAnswer feeds the protocol reader whatever a broken driver
// could write: it must never panic, and an answer it accepts must have an
// id, a known result, and a token only where granted.
func FuzzParseDriverAnswer(f *testing.F) {
	for _, s := range []string{
		`{"id":1,"result":"granted","token":"ab","fence":3,"validity_ms":900}`,
		`{"id":2,"result":"held"}`, `{"id":3,"result":"lost"}`, `{"id":4,"result":"error","message":"timeout"}`,
		`{"id":0,"result":"held"}`, `{"id":1,"result":"held","token":"x"}`, `{"id":1,"result":"granted"} {}`,
		`{"id":-1}`, `not json`, `{"id":1,"result":"granted","extra":1}`, ``, `[]`, `{"id":1e99,"result":"held"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		a, err := ParseDriverAnswer(line)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error of more than one line: %q", err)
			}
			return
		}
		switch {
		case a.ID == 0:
			t.Fatalf("accepted id 0: %q", line)
		case a.Result != ResultGranted && a.Token != "":
			t.Fatalf("accepted a token with %s: %q", a.Result, line)
		case a.Result == ResultError && a.Message == "":
			t.Fatalf("accepted an error without a message: %q", line)
		}
		// What it accepted reads back the same once written again.
		again, _ := json.Marshal(a)
		if b, err := ParseDriverAnswer(again); err != nil || b != a {
			t.Fatalf("%q read %+v, written %s read %+v, %v", line, a, again, b, err)
		}
	})
}

// FuzzParseDriverCaps checks the hello reader the same way.
func FuzzParseDriverCaps(f *testing.F) {
	f.Add([]byte(`{"op":"hello","v":1,"name":"redis-py Lock","version":"4.3.4","renews":true,"fences":false,"waits":false}`))
	f.Add([]byte(`{"op":"hello","v":2,"name":"x"}`))
	f.Add([]byte(`{"op":"acquire"}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		c, err := ParseDriverCaps(line)
		if err == nil && (c.Op != OpHello || c.V != DriverProtocol || c.Name == "") {
			t.Fatalf("accepted %q as %+v", line, c)
		}
	})
}

// FuzzParseDriverCommand: any --lock exec: value splits or is refused in
// one line, and never yields an empty program.
func FuzzParseDriverCommand(f *testing.F) {
	for _, s := range []string{"exec:python3 d.py", `exec:sh -c 'a b' "c d"`, "exec:'", "exec:", "exec:\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, lock string) {
		argv, err := ParseDriverCommand(lock)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error of more than one line: %q", err)
			}
			return
		}
		if len(argv) == 0 || argv[0] == "" && len(strings.TrimSpace(lock)) == len(DriverPrefix) {
			t.Fatalf("%q: argv %q", lock, argv)
		}
	})
}
