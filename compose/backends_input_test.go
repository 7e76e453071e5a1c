package compose_test

import (
	"strings"
	"testing"

	"github.com/lockbench/lockbench/compose"
)

func TestParseZkServers(t *testing.T) {
	cases := []struct {
		in   string
		want []string
		bad  string
	}{
		{in: "127.0.0.1:2181", want: []string{"127.0.0.1:2181"}},
		{in: "zk1, zk2:2182,[::1]:3", want: []string{"zk1:2181", "zk2:2182", "[::1]:3"}},
		{in: "[::1]", want: []string{"[::1]:2181"}},
		{in: "", bad: "no servers"},
		{in: "zk1:0", bad: "port 0"},
		{in: "zk1:x", bad: "port x"},
		{in: "zk1,zk1:2181", bad: "twice"},
		{in: "zk1,,zk2", bad: "not host:port"},
		{in: "zk://zk1:2181", bad: "not host:port"},
	}
	for _, c := range cases {
		got, err := compose.ParseZkServers(c.in)
		if c.bad != "" {
			if err == nil || !compose.IsInputError(err) || !strings.Contains(err.Error(), c.bad) || !strings.Contains(err.Error(), "--zookeeper") {
				t.Errorf("%q: %v, %v; want bad input saying %q", c.in, got, err, c.bad)
			}
			continue
		}
		if err != nil || strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("%q: %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}

func FuzzParseZkServers(f *testing.F) {
	for _, s := range []string{"127.0.0.1:2181", "a,b:1", "[::1]", "", ",", "a:99999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		addrs, err := compose.ParseZkServers(s)
		if err != nil {
			if !compose.IsInputError(err) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("%q: %v: want one line of bad input", s, err)
			}
			return
		}
		again, err := compose.ParseZkServers(strings.Join(addrs, ","))
		if err != nil || strings.Join(again, ",") != strings.Join(addrs, ",") {
			t.Fatalf("%q → %v → %v, %v", s, addrs, again, err)
		}
	})
}

func TestParseNatsURL(t *testing.T) {
	cases := []struct {
		in, endpoint, user, bad string
	}{
		{in: "nats://127.0.0.1:4222", endpoint: "nats://127.0.0.1:4222"},
		{in: "nats://app:s3cret@nats1", endpoint: "nats://nats1:4222", user: "app"},
		{in: "tls://[::1]:7422/", endpoint: "tls://[::1]:7422"},
		{in: "http://nats1:4222", bad: `scheme "http"`},
		{in: "nats://:4222", bad: "no host"},
		{in: "nats://nats1:0", bad: "port 0"},
		{in: "nats://nats1/sub", bad: "no path"},
		{in: "nats://:pw@nats1", bad: "a password needs a user name"},
		{in: "nats://u:topsecret@nats1:x", bad: "nats1:x"},
	}
	for _, c := range cases {
		got, err := compose.ParseNatsURL(c.in)
		if c.bad != "" {
			if err == nil || !compose.IsInputError(err) || !strings.Contains(err.Error(), c.bad) {
				t.Errorf("%q: %+v, %v; want bad input saying %q", c.in, got, err, c.bad)
			}
			if err != nil && (strings.Contains(err.Error(), "topsecret") || strings.Contains(err.Error(), ":pw@")) {
				t.Errorf("%q: error %q shows the password", c.in, err)
			}
			continue
		}
		if err != nil || got.Endpoint() != c.endpoint || got.User != c.user {
			t.Errorf("%q: %+v, %v; want %s as %q", c.in, got, err, c.endpoint, c.user)
		}
	}
}

func FuzzParseNatsURL(f *testing.F) {
	for _, s := range []string{"nats://127.0.0.1:4222", "tls://u:p@h:1/", "nats://h", "nats://[::1]:2", "://", "nats://u:pw@:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := compose.ParseNatsURL(s)
		if err != nil {
			if pw := passwordOf(s); len(pw) > 3 && strings.Contains(err.Error(), pw) {
				t.Fatalf("error %q shows the password %q", err, pw)
			}
			return
		}
		again, err := compose.ParseNatsURL(u.Endpoint())
		if err != nil || again.Endpoint() != u.Endpoint() {
			t.Fatalf("%q → %q → %+v, %v", s, u.Endpoint(), again, err)
		}
	})
}
