package compose

import "testing"

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
