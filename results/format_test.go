package results

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// TestOutputChoosesItsWriter checks that an Output accepts exactly the
// formats it has writers for, table first, and writes with the chosen one.
func TestOutputChoosesItsWriter(t *testing.T) {
	says := func(word string) func(io.Writer, int) error {
		return func(w io.Writer, n int) error { _, err := io.WriteString(w, strings.Repeat(word, n)); return err }
	}
	out := Output[int]{CSV: says("c"), Table: says("t"), Marked: says("m")}
	if got := out.List(); got != "table, csv, marked" {
		t.Errorf("List %q, want table first, then in the fixed order", got)
	}
	if out.Default() != FormatTable {
		t.Errorf("Default %q, want table", out.Default())
	}
	for _, tc := range []struct {
		value, want, wantErr string
	}{
		{value: "table", want: "tt"},
		{value: "csv", want: "cc"},
		{value: "marked", want: "mm"},
		{value: "json", wantErr: `--format "json": want one of table, csv, marked`},
		{value: "", wantErr: `--format "": want one of table, csv, marked`},
		{value: "TABLE", wantErr: `want one of`},
	} {
		f, err := out.Parse(tc.value)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Parse(%q): error %v, want %q", tc.value, err, tc.wantErr)
			}
			continue
		}
		var buf bytes.Buffer
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.value, err)
		}
		if err := out.Write(&buf, f, 2); err != nil || buf.String() != tc.want {
			t.Errorf("Write %s: %q, %v; want %q", f, buf.String(), err, tc.want)
		}
	}
	if err := out.Write(io.Discard, FormatHTML, 1); err == nil {
		t.Error("Write in a format the output does not offer succeeded")
	}
}
