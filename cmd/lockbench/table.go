package main

import (
	"io"
	"strings"
	"text/tabwriter"
)

// plainTable is for listings meant to be read and grepped, not boxed.
type plainTable struct{ tw *tabwriter.Writer }

func newPlainTable(w io.Writer) *plainTable {
	return &plainTable{tw: tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)}
}

func (t *plainTable) row(cells ...string) {
	_, _ = io.WriteString(t.tw, strings.Join(cells, "\t")+"\n")
}

func (t *plainTable) flush() error { return t.tw.Flush() }
