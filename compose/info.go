package compose

import (
	"bufio"
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// ServerStats is one INFO reading of a server's counters.
type ServerStats struct {
	// Calls counts commands executed, by command name (from INFO commandstats),
	// INFO itself left out since the reading adds it.
	Calls map[string]int64
	// CPUSeconds is used_cpu_sys + used_cpu_user.
	CPUSeconds float64
}

// TotalCalls sums Calls.
func (s ServerStats) TotalCalls() int64 {
	var n int64
	for _, c := range s.Calls {
		n += c
	}
	return n
}

// ReadServerStats reads INFO commandstats and INFO cpu. A managed Redis may refuse
// INFO: the error says so and the caller records it instead of failing.
//
// The sections are asked for one at a time: INFO with several sections is
// Redis 7 syntax, and an older server would answer it with an error that
// looks like a refusal.
func ReadServerStats(ctx context.Context, c *redis.Client) (ServerStats, error) {
	var raw strings.Builder
	for _, section := range []string{"commandstats", "cpu"} {
		text, err := c.Info(ctx, section).Result()
		if err != nil {
			return ServerStats{}, fmt.Errorf("INFO %s on %s: %w", section, c.Options().Addr, err)
		}
		raw.WriteString(text)
		raw.WriteString("\r\n")
	}
	return ParseInfo(raw.String()), nil
}

// ParseInfo extracts command calls and CPU seconds from an INFO reply.
func ParseInfo(raw string) ServerStats {
	s := ServerStats{Calls: map[string]int64{}}
	sc := bufio.NewScanner(strings.NewReader(raw))
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), ":")
		if !ok {
			continue
		}
		switch {
		case strings.HasPrefix(k, "cmdstat_"):
			name := strings.TrimPrefix(k, "cmdstat_")
			if name == "info" {
				continue
			}
			for _, field := range strings.Split(v, ",") {
				if calls, ok := strings.CutPrefix(field, "calls="); ok {
					n, _ := strconv.ParseInt(calls, 10, 64)
					s.Calls[name] = n
				}
			}
		case k == "used_cpu_sys" || k == "used_cpu_user":
			f, _ := strconv.ParseFloat(v, 64)
			s.CPUSeconds += f
		}
	}
	return s
}

// ServerVersion returns the redis_version (or valkey_version) INFO server reports.
func ServerVersion(ctx context.Context, c *redis.Client) (string, error) {
	raw, err := c.Info(ctx, "server").Result()
	if err != nil {
		return "", fmt.Errorf("INFO server on %s: %w", c.Options().Addr, err)
	}
	if v := infoField(raw, "valkey_version"); v != "" {
		return "valkey " + v, nil
	}
	return infoField(raw, "redis_version"), nil
}
