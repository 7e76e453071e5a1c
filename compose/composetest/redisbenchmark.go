package composetest

import (
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// RedisBenchmarkPairsCPU runs redis-benchmark's lock pair against the
// server on port: -P 16 with 50 clients, 25 sending SET key token NX PX
// 10000 and 25 the release script (releaseSHA) by EVALSHA, pairs commands
// each, both halves at once. It returns their CPU time (user + system),
// the figure the generator's client CPU per acquisition is set beside
// (issue 39), and skips t where redis-benchmark is not on PATH.
func RedisBenchmarkPairsCPU(t testing.TB, port int, releaseSHA string, pairs int) time.Duration {
	t.Helper()
	tool, err := exec.LookPath("redis-benchmark")
	if err != nil {
		t.Skip("redis-benchmark not on PATH")
	}
	common := []string{"-p", strconv.Itoa(port), "-P", "16", "-c", "25", "-n", strconv.Itoa(pairs), "-r", "1000000", "-q"}
	halves := [][]string{{"SET", "rb:__rand_int__", "0123456789abcdef0123456789abcdef", "NX", "PX", "10000"},
		{"EVALSHA", releaseSHA, "1", "rb:__rand_int__", "0123456789abcdef0123456789abcdef"}}
	var cmds []*exec.Cmd
	for _, h := range halves {
		cmd := exec.Command(tool, append(append([]string{}, common...), h...)...)
		if err := cmd.Start(); err != nil {
			t.Fatalf("start redis-benchmark: %v", err)
		}
		cmds = append(cmds, cmd)
	}
	var total time.Duration
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("redis-benchmark: %v", err)
		}
		total += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	return total
}
