package lockimpl

import (
	"bufio"
	"strings"
	"testing"
)

// TestRawReadTellsRepliesApart: the raw reader tells apart what a lock
// definition's rules read (+OK, another status, a bulk string, OK as a bulk
// string, nil, an integer, an array, a nil array) and leaves the stream in
// step after each, error replies inside an array included; a malformed
// reply is an error that is not the server's.
func TestRawReadTellsRepliesApart(t *testing.T) {
	stream := "+OK\r\n+QUEUED\r\n$5\r\nhello\r\n$2\r\nOK\r\n$2\r\nok\r\n$-1\r\n:42\r\n:-1\r\n" +
		"*3\r\n:1\r\n-ERR inner\r\n*1\r\n$1\r\nx\r\n*-1\r\n-NOSCRIPT No matching script\r\n:7\r\n"
	want := []struct {
		rep rawReply
		err string
	}{
		{rep: rawReply{kind: '+', ok: true}},
		{rep: rawReply{kind: '+'}},
		{rep: rawReply{kind: '$'}},
		{rep: rawReply{kind: '$', ok: true}},
		{rep: rawReply{kind: '$'}},
		{rep: rawReply{kind: '$', isNil: true}},
		{rep: rawReply{kind: ':', n: 42}},
		{rep: rawReply{kind: ':', n: -1}},
		{rep: rawReply{kind: '*'}},
		{rep: rawReply{kind: '*', isNil: true}},
		{err: "NOSCRIPT No matching script"},
		{rep: rawReply{kind: ':', n: 7}},
	}
	c := &rawConn{r: bufio.NewReader(strings.NewReader(stream))}
	for i, w := range want {
		rep, err := c.read()
		switch {
		case w.err != "":
			if _, isReply := err.(rawError); !isReply || err.Error() != w.err {
				t.Errorf("reply %d: error %v; want the server's %q", i, err, w.err)
			}
		case err != nil || rep != w.rep:
			t.Errorf("reply %d: %+v %v; want %+v", i, rep, err, w.rep)
		}
	}
	for _, bad := range []string{"?x\r\n", ":x\r\n", "$-2\r\n", "*x\r\n", "+OK\n"} {
		c := &rawConn{r: bufio.NewReader(strings.NewReader(bad))}
		if _, err := c.read(); err == nil {
			t.Errorf("%q: no error", bad)
		} else if _, isReply := err.(rawError); isReply {
			t.Errorf("%q: %v read as the server's error", bad, err)
		}
	}
}

// TestDefRulesReadBothPaths: a reply read by the raw reader and the same
// reply as go-redis gives it (replyOf) match the same rules.
func TestDefRulesReadBothPaths(t *testing.T) {
	rules := map[string]matcher{"OK": {kind: matchOK}, "nil": {kind: matchNil}, "1": {kind: matchInt, n: 1},
		"positive": {kind: matchPositive}, "integer": {kind: matchInteger}}
	for _, tc := range []struct {
		raw     string
		goredis any
		matches []string
	}{
		{"+OK\r\n", "OK", []string{"OK"}},
		{"$2\r\nOK\r\n", "OK", []string{"OK"}},
		{"$3\r\nabc\r\n", "abc", nil},
		{"$-1\r\n", nil, []string{"nil"}},
		{":1\r\n", int64(1), []string{"1", "positive", "integer"}},
		{":0\r\n", int64(0), []string{"integer"}},
		{"*1\r\n:1\r\n", []any{int64(1)}, nil},
	} {
		c := &rawConn{r: bufio.NewReader(strings.NewReader(tc.raw))}
		rep, err := c.read()
		if err != nil {
			t.Fatalf("%q: %v", tc.raw, err)
		}
		for name, m := range rules {
			want := false
			for _, n := range tc.matches {
				want = want || n == name
			}
			if got := m.match(rep); got != want {
				t.Errorf("%q raw: rule %s matches %v; want %v", tc.raw, name, got, want)
			}
			if got := m.match(replyOf(tc.goredis)); got != want {
				t.Errorf("%q go-redis: rule %s matches %v; want %v", tc.raw, name, got, want)
			}
		}
	}
}

// TestDefWireEncodes: a definition's command encoded once with its
// templates as slots is, with the call's values, the RESP appendCommand
// writes for the expanded arguments, by EVALSHA and by EVAL.
func TestDefWireEncodes(t *testing.T) {
	d, err := ParseLockDef([]byte(`acquire:
  lua: "return 1"
  keys: ["{key}", "x:{{{key}}}", "{fence_key}"]
  args: ["{token}", "lit", "{ttl_ms}", "{ttl_s}", "a{token}b", ""]
  reply: {granted: 1, held: 0}
release:
  command: [DEL, "{key}"]
  reply: {ok: 1, lost: 0}
`))
	if err != nil {
		t.Fatal(err)
	}
	vals := wireVals{key: "k1", token: "tok", ttlMS: "1500", ttlS: "2"}
	op := &d.acquire
	args := []string{op.script.Hash(), "3", "k1", "x:{k1}", "k1:fence", "tok", "lit", "1500", "2", "atokb", ""}
	if got, want := string(op.wire.encode(nil, &vals, false)), string(appendCommand(nil, append([]string{"EVALSHA"}, args...)...)); got != want {
		t.Errorf("EVALSHA:\n got %q\nwant %q", got, want)
	}
	args[0] = "return 1"
	if got, want := string(op.wire.encode(nil, &vals, true)), string(appendCommand(nil, append([]string{"EVAL"}, args...)...)); got != want {
		t.Errorf("EVAL:\n got %q\nwant %q", got, want)
	}
	if got, want := string(d.release.wire.encode(nil, &vals, false)), string(appendCommand(nil, "DEL", "k1")); got != want || d.release.wire.name != "del" {
		t.Errorf("command: %q named %s; want %q named del", got, d.release.wire.name, want)
	}
	if !op.secs || d.release.secs {
		t.Errorf("secs: acquire %v release %v; want true, false", op.secs, d.release.secs)
	}
}
