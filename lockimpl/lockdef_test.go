package lockimpl_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose/composetest"
	"github.com/lockbench/lockbench/lockimpl"
)

// shippedDefs are the definitions in lockimpl/defs.
var shippedDefs = []string{"single.yaml", "redis-py.yaml", "reentrant-hash.yaml"}

// quorumDefs are the shipped definitions that ask for a quorum (redlock:N).
var quorumDefs = []string{"redlock.yaml"}

// TestShippedDefsParse: every shipped definition parses, renews, and none
// fences; only the quorum ones ask for a quorum.
func TestShippedDefsParse(t *testing.T) {
	for _, f := range append(slices.Clone(shippedDefs), quorumDefs...) {
		d, err := lockimpl.LoadLockDef(filepath.Join("defs", f))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if !d.Renews() || d.Fences() {
			t.Errorf("%s: renews %v fences %v; want true, false", f, d.Renews(), d.Fences())
		}
		if want := slices.Contains(quorumDefs, f); d.Quorum() != want {
			t.Errorf("%s: quorum %v; want %v", f, d.Quorum(), want)
		}
	}
}

const okRelease = "release: {command: [DEL, \"{key}\"], reply: {ok: 1, lost: 0}}\n"

// TestParseLockDefRefuses: each bad definition is one line naming what is wrong.
func TestParseLockDefRefuses(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"no acquire", okRelease, "no acquire"},
		{"no release", "acquire: {command: [SET, \"{key}\", x, NX], reply: {granted: OK, held: nil}}\n", "no release"},
		{"no script", "acquire: {reply: {granted: OK, held: nil}}\n" + okRelease, "acquire: no script: give lua (with keys and args) or command"},
		{"both", "acquire: {lua: x, command: [GET], reply: {granted: OK, held: nil}}\n" + okRelease, "acquire: both lua and command"},
		{"unknown template", "acquire: {command: [SET, \"{kee}\", x], reply: {granted: OK, held: nil}}\n" + okRelease, "acquire.command[1]: unknown template {kee}; accepted: {key}, {token}"},
		{"unclosed", "acquire: {lua: x, keys: [\"{key\"], reply: {granted: OK, held: nil}}\n" + okRelease, "acquire.keys[0]: \"{key\": unclosed {"},
		{"unknown field", "acquire: {command: [GET], replies: {}}\n" + okRelease, "field replies: unknown; accepted: lua, command, keys, args, reply"},
		{"unknown top field", "quorums: majority\n", "field quorums: unknown; accepted: name, quorum, driver, acquire, release, renew"},
		{"quorum a count", "quorum: 3\nacquire: {command: [SET, \"{key}\", x, NX], reply: {granted: OK, held: nil}}\n" + okRelease, "quorum: \"3\": accepted: majority"},
		{"driver with scripts", "driver: ./mine\n" + okRelease, "driver: a definition naming a driver has no acquire, release, renew or quorum"},
		{"driver unclosed quote", "driver: \"python3 'x\"\n", "driver: lock \"exec:python3 'x\": unclosed ' quote"},
		{"quorum empty list", "quorum: []\n", "cannot unmarshal"},
		{"unknown reply field", "acquire: {command: [GET], reply: {granted: OK, busy: 1}}\n" + okRelease, "field busy: unknown; accepted: granted, held"},
		{"reply rule of another op", "acquire: {command: [GET], reply: {granted: OK, held: nil, lost: 0}}\n" + okRelease, "acquire.reply.lost: not read on acquire; accepted: granted, held, fence, validity"},
		{"missing held", "acquire: {command: [GET], reply: {granted: OK}}\n" + okRelease, "acquire.reply: needs granted and held"},
		{"bad matcher", "acquire: {command: [GET], reply: {granted: yes, held: nil}}\n" + okRelease, "acquire.reply.granted: \"yes\": accepted: OK, nil"},
		{"fence on fixed reply", "acquire: {command: [GET], reply: {granted: OK, held: nil, fence: reply}}\n" + okRelease, "acquire.reply.fence: needs a success reply of positive or integer"},
		{"command with keys", "acquire: {command: [GET], keys: [\"{key}\"], reply: {granted: OK, held: nil}}\n" + okRelease, "keys and args go with lua"},
		{"not yaml", "acquire: [\n", "not YAML"},
	} {
		_, err := lockimpl.ParseLockDef([]byte(tc.src))
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v; want one line with %q", tc.name, err, tc.want)
		}
	}
}

// TestLoadLockDefNamesTheFile: a file's error names the file.
func TestLoadLockDefNamesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mine.yaml")
	if err := os.WriteFile(path, []byte(okRelease), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := lockimpl.LoadLockDef(path)
	if err == nil || !strings.HasPrefix(err.Error(), "lock definition "+path+": no acquire") {
		t.Errorf("error %v; want it to start with the file", err)
	}
	if _, ok := lockimpl.Describe(lockimpl.DefPrefix + path); ok {
		t.Errorf("Describe took a definition that does not parse")
	}
}

// TestDefLocksOnRedis: each shipped definition on a real redis-server, on
// the raw path and through a pipe (--pipeline auto), grants, refuses a
// second holder, renews, releases once, reads a release after expiry as
// lost, and runs its scripts again after SCRIPT FLUSH (EVAL after NOSCRIPT).
func TestDefLocksOnRedis(t *testing.T) {
	for _, f := range shippedDefs {
		for _, mode := range []string{"", pipeSuffix} {
			t.Run(f+mode, func(t *testing.T) { testDefLockOnRedis(t, f, mode) })
		}
	}
}

func testDefLockOnRedis(t *testing.T, f, mode string) {
	abs, err := filepath.Abs(filepath.Join("defs", f))
	if err != nil {
		t.Fatal(err)
	}
	name := lockimpl.DefPrefix + abs
	if d, ok := lockimpl.Describe(name); !ok || !d.Renewable || !d.Pipelinable || d.Backend != lockimpl.BackendRedis {
		t.Fatalf("Describe(%s) = %+v, %v", name, d, ok)
	}
	l, clients := newLock(t, name+mode, 1)
	ctx := context.Background()
	lease, out, err := l.Acquire(ctx, "k", time.Minute)
	if out != lockimpl.OK || err != nil || lease.Token == "" {
		t.Fatalf("acquire: %v %v", out, err)
	}
	if _, out, err := l.Acquire(ctx, "k", time.Minute); out != lockimpl.Contended || err != nil {
		t.Fatalf("second acquire: %v %v; want contended", out, err)
	}
	if out, err := l.Renew(ctx, &lease, 2*time.Minute); out != lockimpl.OK || err != nil {
		t.Fatalf("renew: %v %v", out, err)
	}
	if pttl := clients[0].PTTL(ctx, "k").Val(); pttl <= time.Minute {
		t.Errorf("pttl after renew %v; want above 1m", pttl)
	}
	if out, err := l.Release(ctx, lease); out != lockimpl.OK || err != nil {
		t.Fatalf("release: %v %v", out, err)
	}
	if out, err := l.Release(ctx, lease); !out.IsLost() || err != nil {
		t.Errorf("second release: %v %v; want lost", out, err)
	}
	if out, err := l.Renew(ctx, &lease, time.Minute); !out.IsLost() || err != nil {
		t.Errorf("renew after release: %v %v; want lost", out, err)
	}
	short, out, _ := l.Acquire(ctx, "e", 50*time.Millisecond)
	if out != lockimpl.OK {
		t.Fatalf("acquire e: %v", out)
	}
	time.Sleep(150 * time.Millisecond)
	if out, err := l.Release(ctx, short); !out.IsLost() || err != nil {
		t.Errorf("release after expiry: %v %v; want lost", out, err)
	}
	// After a SCRIPT FLUSH the scripts run again (EVAL after NOSCRIPT).
	clients[0].ScriptFlush(ctx)
	lease, out, err = l.Acquire(ctx, "k", time.Minute)
	if out != lockimpl.OK || err != nil {
		t.Fatalf("acquire after flush: %v %v", out, err)
	}
	if out, err := l.Release(ctx, lease); out != lockimpl.OK || err != nil {
		t.Fatalf("release after flush: %v %v", out, err)
	}
}

// TestDefLockRawPathAfterFlush: once the raw path (or the pipe) carries the
// definition's commands, a SCRIPT FLUSH makes its next script run by EVAL
// on the same path, and the release still succeeds.
func TestDefLockRawPathAfterFlush(t *testing.T) {
	abs, err := filepath.Abs(filepath.Join("defs", "single.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	server := composetest.Servers(t, 1)[0]
	for _, pipe := range []bool{false, true} {
		t.Run(map[bool]string{false: "raw", true: "pipe"}[pipe], func(t *testing.T) {
			c := composetest.Client(t, server)
			sent := lockimpl.NewSentCounter()
			opts := lockimpl.Options{Sent: sent}
			if pipe {
				opts.Pipe = &lockimpl.PipeOptions{}
			}
			l, err := lockimpl.New(lockimpl.DefPrefix+abs, lockimpl.Nodes(c), opts)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = l.(io.Closer).Close() })
			ctx := context.Background()
			// Until the path's connection is dialled, calls go through the
			// client, which the counter does not see.
			for deadline := time.Now().Add(5 * time.Second); sent.Read().ByCommand["evalsha"] == 0; {
				if time.Now().After(deadline) {
					t.Fatal("the definition's release never went the raw way")
				}
				lease, out, err := l.Acquire(ctx, "warm", time.Minute)
				if out != lockimpl.OK {
					t.Fatalf("acquire: %v %v", out, err)
				}
				if out, err := l.Release(ctx, lease); out != lockimpl.OK {
					t.Fatalf("release: %v %v", out, err)
				}
				time.Sleep(10 * time.Millisecond)
			}
			if err := c.ScriptFlush(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			lease, out, err := l.Acquire(ctx, "k", time.Minute)
			if out != lockimpl.OK {
				t.Fatalf("acquire after flush: %v %v", out, err)
			}
			before := sent.Read().ByCommand["eval"]
			if out, err := l.Release(ctx, lease); out != lockimpl.OK || err != nil {
				t.Fatalf("release after flush: %v %v", out, err)
			}
			if n := sent.Read().ByCommand["eval"] - before; n != 1 {
				t.Errorf("EVALs sent after the flush: %d; want 1 (the release's resend after NOSCRIPT)", n)
			}
			if n, _ := c.Exists(ctx, "k").Result(); n != 0 {
				t.Errorf("key left after release")
			}
		})
	}
}
