package compose

import (
	"errors"
	"fmt"
	"io"
	"testing"
)

// TestJavaRandom plants java.util.Random's documented outputs: the
// session password derivation is only right if the generator is Java's.
func TestJavaRandom(t *testing.T) {
	for _, c := range []struct {
		seed int64
		want int32
	}{{0, -1155484576}, {42, -1170105035}} {
		if got := newJavaRandom(c.seed).nextInt(); got != c.want {
			t.Errorf("new Random(%d).nextInt() = %d, want %d", c.seed, got, c.want)
		}
	}
	// nextBytes takes each int low byte first: -1155484576 is 0xBB20B460.
	if got := newJavaRandom(0).nextBytes(5); got[0] != 0x60 || got[1] != 0xB4 || got[2] != 0x20 || got[3] != 0xBB {
		t.Errorf("new Random(0).nextBytes: % x, want 60 b4 20 bb first", got)
	}
	if len(zkSessionPassword(1)) != 16 {
		t.Error("a session password is 16 bytes")
	}
}

func TestZkSeq(t *testing.T) {
	for in, want := range map[string]string{"lock-ab-0000000012": "0000000012", "short": "short"} {
		if got := zkSeq(in); got != want {
			t.Errorf("zkSeq(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestClosedEarlier: a member saying the session had already ended counts
// as the fault's success only after a close sent through an earlier member
// went unanswered; alone, or after a refused dial, it does not.
func TestClosedEarlier(t *testing.T) {
	gone := fmt.Errorf("b: session 0x1 %w", errZkSessionGone)
	unanswered := fmt.Errorf("a: close session 0x1: %w: %w", errZkCloseUnanswered, io.EOF)
	refused := errors.New("dial a: connection refused")
	for _, c := range []struct {
		name    string
		earlier []error
		err     error
		want    bool
	}{
		{name: "ended after an unanswered close", earlier: []error{unanswered}, err: gone, want: true},
		{name: "ended after a refused dial and an unanswered close", earlier: []error{refused, unanswered}, err: gone, want: true},
		{name: "ended with no close sent", earlier: []error{refused}, err: gone},
		{name: "ended at the first member", err: gone},
		{name: "another failure after an unanswered close", earlier: []error{unanswered}, err: refused},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := closedEarlier(c.earlier, c.err); got != c.want {
				t.Fatalf("closedEarlier = %v, want %v", got, c.want)
			}
		})
	}
}
