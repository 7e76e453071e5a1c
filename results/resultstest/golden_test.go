package resultstest

import "testing"

func TestFirstDiff(t *testing.T) {
	for _, tc := range []struct {
		name, got, want string
		line            int
		g, w            string
	}{
		{name: "equal", got: "a\nb\n", want: "a\nb\n"},
		{name: "second line differs", got: "a\nb\n", want: "a\nc\n", line: 2, g: "b", w: "c"},
		{name: "got is shorter", got: "a\n", want: "a\nb\n", line: 2, g: "", w: "b"},
		{name: "got is longer", got: "a\nb\nc", want: "a\nb", line: 3, g: "c", w: ""},
		{name: "first line", got: "x", want: "y", line: 1, g: "x", w: "y"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line, g, w := firstDiff(tc.got, tc.want)
			if line != tc.line || g != tc.g || w != tc.w {
				t.Errorf("firstDiff = %d %q %q, want %d %q %q", line, g, w, tc.line, tc.g, tc.w)
			}
		})
	}
}
