package compose

import (
	"strings"
	"testing"
)

func TestParseZkMntr(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     int64
		bad      bool
	}{
		{name: "counter among others", in: "zk_version\t3.8.0-x, built on y\nzk_packets_sent\t15\nzk_packets_received\t16\nzk_avg_latency\t0.0\n", want: 16},
		{name: "trailing spaces", in: "zk_packets_received\t 42 \n", want: 42},
		{name: "not whitelisted", in: "mntr is not executed because it is not in the whitelist.\n", bad: true},
		{name: "prefix of the name only", in: "zk_packets_received_total\t7\n", bad: true},
		{name: "not a number", in: "zk_packets_received\tmany\n", bad: true},
		{name: "negative", in: "zk_packets_received\t-1\n", bad: true},
		{name: "empty", in: "", bad: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := parseZkMntr(c.in, zkRequestCounter)
			switch {
			case c.bad && err == nil:
				t.Fatalf("parsed %d, want an error", got)
			case !c.bad && (err != nil || got != c.want):
				t.Fatalf("got %d, %v; want %d", got, err, c.want)
			}
		})
	}
}

func FuzzParseZkMntr(f *testing.F) {
	f.Add("zk_packets_received\t16\n")
	f.Add("mntr is not executed because it is not in the whitelist.\n")
	f.Add("zk_packets_received\t99999999999999999999\n")
	f.Fuzz(func(t *testing.T, in string) {
		n, err := parseZkMntr(in, zkRequestCounter)
		checkParsedCount(t, n, err)
	})
}

func TestParseNatsVarz(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     string
		msgs     int64
		bad      bool
	}{
		{name: "client counter", in: `{"in_msgs": 90, "in_client_msgs": 30, "cpu": 4.5}`, want: "in_client_msgs", msgs: 30},
		{name: "client counter at zero", in: `{"in_msgs": 90, "in_client_msgs": 0}`, want: "in_client_msgs", msgs: 0},
		{name: "older server", in: `{"in_msgs": 90}`, want: "in_msgs", msgs: 90},
		{name: "neither", in: `{"cpu": 1}`, bad: true},
		{name: "negative", in: `{"in_client_msgs": -3, "in_msgs": 4}`, bad: true},
		{name: "not JSON", in: `<html>nope</html>`, bad: true},
		{name: "wrong type", in: `{"in_client_msgs": "30"}`, bad: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			name, msgs, err := parseNatsVarz([]byte(c.in))
			switch {
			case c.bad && err == nil:
				t.Fatalf("parsed %s=%d, want an error", name, msgs)
			case !c.bad && (err != nil || name != c.want || msgs != c.msgs):
				t.Fatalf("got %s=%d, %v; want %s=%d", name, msgs, err, c.want, c.msgs)
			}
		})
	}
}

func FuzzParseNatsVarz(f *testing.F) {
	f.Add(`{"in_msgs": 90, "in_client_msgs": 30}`)
	f.Add(`{"in_msgs": 90}`)
	f.Add(`{}`)
	f.Fuzz(func(t *testing.T, in string) {
		name, n, err := parseNatsVarz([]byte(in))
		checkParsedCount(t, n, err)
		if err == nil && name != "in_client_msgs" && name != "in_msgs" {
			t.Fatalf("counter named %q", name)
		}
	})
}

func TestParseProcStatCPU(t *testing.T) {
	// utime and stime are the 14th and 15th fields of the whole line.
	const tail = " S 1 2 3 0 -1 4194560 100 0 0 0 %s 0 0 20 0 30 0 100 1000 200"
	for _, c := range []struct {
		name, in string
		want     int64
		bad      bool
	}{
		{name: "java", in: "4242 (java)" + strings.Replace(tail, "%s", "250 70", 1), want: 320},
		{name: "command with spaces and parentheses", in: "7 (a (b) c)" + strings.Replace(tail, "%s", "5 6", 1), want: 11},
		{name: "no command", in: "4242 java S 1", bad: true},
		{name: "cut short", in: "4242 (java) S 1 2 3", bad: true},
		{name: "not ticks", in: "4242 (java)" + strings.Replace(tail, "%s", "x 6", 1), bad: true},
		{name: "negative", in: "4242 (java)" + strings.Replace(tail, "%s", "-5 6", 1), bad: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := parseProcStatCPU(c.in)
			switch {
			case c.bad && err == nil:
				t.Fatalf("parsed %d, want an error", got)
			case !c.bad && (err != nil || got != c.want):
				t.Fatalf("got %d, %v; want %d", got, err, c.want)
			}
		})
	}
}

func FuzzParseProcStatCPU(f *testing.F) {
	f.Add("4242 (java) S 1 2 3 0 -1 4194560 100 0 0 0 250 70 0 0 20 0 30 0")
	f.Add("7 (a (b) c) S")
	f.Fuzz(func(t *testing.T, in string) {
		n, err := parseProcStatCPU(in)
		checkParsedCount(t, n, err)
	})
}

// checkParsedCount: a parser of server text either errs in one line of
// valid text or returns a count, never a negative one.
func checkParsedCount(t *testing.T, n int64, err error) {
	t.Helper()
	if err != nil {
		if msg := err.Error(); strings.Contains(msg, "\n") {
			t.Fatalf("error %q is not one line", msg)
		}
		return
	}
	if n < 0 {
		t.Fatalf("parsed a negative count %d", n)
	}
}
