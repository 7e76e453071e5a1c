package failovermap

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// LocalVersion is the version of the redis-server the local topology runs
// ("7.0.15"), from `redis-server --version`.
func LocalVersion(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "redis-server", "--version").Output()
	if err != nil {
		return "", fmt.Errorf("redis-server --version: %w", err)
	}
	return parseVersion(string(out))
}

// parseVersion reads the v= field of `redis-server --version`.
func parseVersion(out string) (string, error) {
	for _, f := range strings.Fields(out) {
		if v, ok := strings.CutPrefix(f, "v="); ok && v != "" {
			return v, nil
		}
	}
	return "", fmt.Errorf("redis-server --version: no v= in %q", strings.TrimSpace(out))
}

// HasWaitAOF reports whether a Redis version has WAITAOF (7.2 and later);
// an unreadable version has not.
func HasWaitAOF(version string) bool {
	parts := strings.SplitN(version, ".", 3)
	if len(parts) < 2 {
		return false
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return false
	}
	return major > 7 || major == 7 && minor >= 2
}
