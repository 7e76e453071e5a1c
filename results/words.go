package results

import "fmt"

// Count writes n with its noun in the number it takes: "1 critical
// section", "2 critical sections". A noun whose plural is not noun+"s" is
// given as "singular|plural" ("1 run was|2 runs were").
func Count(n int64, noun string) string {
	one, many := noun, noun+"s"
	for i := 0; i < len(noun); i++ {
		if noun[i] == '|' {
			one, many = noun[:i], noun[i+1:]
			break
		}
	}
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
