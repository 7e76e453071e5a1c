package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/compose"
)

// composeTool is the Compose command that answers here: the v2 plugin
// (docker compose) or the v1 tool (docker-compose); nil when neither does.
func composeTool() []string {
	for _, cmd := range [][]string{{"docker", "compose"}, {"docker-compose"}} {
		if exec.Command(cmd[0], append(cmd[1:], "version")...).Run() == nil {
			return cmd
		}
	}
	return nil
}

func freeLoopbackPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestComposeFilesEndToEnd brings each file of compose/docker/ up with the
// local image on free ports, measures it with --redis URLs, and takes it
// down again (down -v): no container or network of the project may remain.
func TestComposeFilesEndToEnd(t *testing.T) {
	needDockerImage(t)
	tool := composeTool()
	if tool == nil {
		t.Skip("needs docker compose (v2) or docker-compose (v1)")
	}
	for _, tc := range []struct {
		file  string
		ports []string // the file's port variables, in --redis order for data nodes
		data  int      // how many of ports are data nodes lockbench measures
		args  []string
	}{
		{"single.yml", []string{"LOCKBENCH_PORT"}, 1, []string{"--topology", "single"}},
		{"redlock5.yml", []string{"LOCKBENCH_PORT_1", "LOCKBENCH_PORT_2", "LOCKBENCH_PORT_3", "LOCKBENCH_PORT_4", "LOCKBENCH_PORT_5"}, 5, []string{"--topology", "redlock:5"}},
		{"replicated.yml", []string{"LOCKBENCH_PRIMARY_PORT", "LOCKBENCH_REPLICA_PORT", "LOCKBENCH_SENTINEL_PORT_1", "LOCKBENCH_SENTINEL_PORT_2", "LOCKBENCH_SENTINEL_PORT_3"}, 1, []string{"--topology", "single"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			project := fmt.Sprintf("lockbench-test-%d-%s", os.Getpid(), strings.TrimSuffix(tc.file, ".yml"))
			env := append(os.Environ(), "LOCKBENCH_REDIS_IMAGE="+compose.LocalImage)
			ports := make([]int, len(tc.ports))
			for i, v := range tc.ports {
				ports[i] = freeLoopbackPort(t)
				env = append(env, fmt.Sprintf("%s=%d", v, ports[i]))
			}
			file := filepath.Join("..", "..", "compose", "docker", tc.file)
			composeCmd := func(args ...string) (string, error) {
				cmd := exec.Command(tool[0], append(append(tool[1:], "-p", project, "-f", file), args...)...)
				cmd.Env = env
				var out bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &out
				err := cmd.Run()
				return out.String(), err
			}
			down := func() {
				if out, err := composeCmd("down", "-v", "--timeout", "1"); err != nil {
					t.Errorf("down -v: %v\n%s", err, out)
				}
			}
			downed := false
			defer func() {
				if !downed {
					down()
				}
			}()
			if out, err := composeCmd("up", "-d"); err != nil {
				t.Fatalf("up -d: %v\n%s", err, out)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var urls []string
			for _, p := range ports {
				c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(p), MaxRetries: -1})
				for c.Ping(ctx).Err() != nil {
					if ctx.Err() != nil {
						t.Fatalf("127.0.0.1:%d never answered PING", p)
					}
					time.Sleep(100 * time.Millisecond)
				}
				_ = c.Close()
				urls = append(urls, "redis://127.0.0.1:"+strconv.Itoa(p))
			}
			if tc.file == "replicated.yml" {
				s := redis.NewSentinelClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(ports[2])})
				defer s.Close()
				for {
					addr, err := s.GetMasterAddrByName(ctx, compose.MasterName).Result()
					if err == nil && strings.Join(addr, ":") == "primary:6379" {
						break
					}
					if ctx.Err() != nil {
						t.Fatalf("sentinel-1 names %v, %v as the primary; want primary:6379", addr, err)
					}
					time.Sleep(100 * time.Millisecond)
				}
			}
			args := append([]string{"run", "-d", "1s", "--warmup", "0", "-q", "--format", "json", "--out", t.TempDir()}, tc.args...)
			for _, u := range urls[:tc.data] {
				args = append(args, "--redis", u)
			}
			code, stdout, errs := lockbench(t, args...)
			if code != 0 {
				t.Fatalf("run on %s: exit %d: %s", tc.file, code, errs)
			}
			var doc map[string]any
			if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
				t.Fatal(err)
			}
			if acquired, _ := field(t, doc, "contention.acquired").(float64); acquired == 0 {
				t.Errorf("no acquisition on %s", tc.file)
			}
			if p := field(t, doc, "topology.provider"); p != "external" {
				t.Errorf("provider %v, want external", p)
			}
			down()
			downed = true
			c, n, err := compose.CountLabelled(context.Background(), "com.docker.compose.project="+project)
			if err != nil || c != 0 || n != 0 {
				t.Fatalf("after down -v: %d containers, %d networks of project %s (%v)", c, n, project, err)
			}
		})
	}
}

// TestComposeImageVariableIsNotARunFlag keeps the compose files' image
// variable apart from the environment form of a run flag: exported for
// docker compose, it must not change (or break) a lockbench run on the
// compose servers' --redis URLs.
func TestComposeImageVariableIsNotARunFlag(t *testing.T) {
	t.Setenv("LOCKBENCH_REDIS_IMAGE", compose.LocalImage)
	code, _, errs := lockbench(t, "run", "-d", "1s", "--warmup", "0", "-q", "--out", t.TempDir())
	if code != 0 {
		t.Fatalf("a local run with LOCKBENCH_REDIS_IMAGE set: exit %d: %s", code, errs)
	}
}
