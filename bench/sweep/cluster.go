package sweep

import "strings"

// JoinLockSpecs puts NAME@cluster:M,R back together where the command line
// split a repeatable --lock at its comma ("single@cluster:3", "0"): a piece
// that is a bare number continues a cluster spec that has no replica count.
func JoinLockSpecs(pieces []string) []string {
	var out []string
	for _, p := range pieces {
		if n := len(out); n > 0 && isWholeNumber(p) {
			_, topo, _ := strings.Cut(out[n-1], "@")
			if strings.HasPrefix(topo, "cluster:") && !strings.Contains(topo, ",") {
				out[n-1] += "," + strings.TrimSpace(p)
				continue
			}
		}
		out = append(out, p)
	}
	return out
}

func isWholeNumber(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
