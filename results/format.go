package results

import (
	"fmt"
	"io"
	"strings"
)

// Format is an output format, as --format names it.
type Format string

// The output formats a command may offer.
const (
	// FormatTable is the human-readable tables.
	FormatTable Format = "table"
	// FormatJSON is the command's figures as JSON.
	FormatJSON Format = "json"
	// FormatCSV is the command's figures as CSV.
	FormatCSV Format = "csv"
	// FormatMarked is each result's JSON between the markers that results
	// collect reads from logs.
	FormatMarked Format = "marked"
	// FormatHTML is a self-contained HTML page.
	FormatHTML Format = "html"
)

// Output is how one command writes what it made (of type T) in each
// format it offers: a nil writer is a format it does not offer. The set a
// command accepts, its --format help and the choice of writer are all read
// from it, so each command states its formats once.
type Output[T any] struct {
	Table, JSON, CSV, Marked, HTML func(w io.Writer, v T) error
}

// formatWriter is one offered format and its writer.
type formatWriter[T any] struct {
	format Format
	write  func(io.Writer, T) error
}

// offered lists the formats o writes, table first (the default).
func (o Output[T]) offered() []formatWriter[T] {
	var out []formatWriter[T]
	for _, fw := range []formatWriter[T]{
		{FormatTable, o.Table}, {FormatJSON, o.JSON}, {FormatCSV, o.CSV}, {FormatMarked, o.Marked}, {FormatHTML, o.HTML},
	} {
		if fw.write != nil {
			out = append(out, fw)
		}
	}
	return out
}

// Formats lists the formats o accepts, the default first.
func (o Output[T]) Formats() []Format {
	var out []Format
	for _, fw := range o.offered() {
		out = append(out, fw.format)
	}
	return out
}

// Default is the format used when --format is not given.
func (o Output[T]) Default() Format {
	if fs := o.Formats(); len(fs) > 0 {
		return fs[0]
	}
	return ""
}

// List names the accepted formats for help and refusals: "table, json, csv".
func (o Output[T]) List() string {
	var names []string
	for _, f := range o.Formats() {
		names = append(names, string(f))
	}
	return strings.Join(names, ", ")
}

// Parse reads a --format value: one of the formats o offers, or an error
// naming what was given and what is accepted.
func (o Output[T]) Parse(value string) (Format, error) {
	for _, f := range o.Formats() {
		if string(f) == value {
			return f, nil
		}
	}
	return "", fmt.Errorf("--format %q: want one of %s", value, o.List())
}

// Write writes v to w in format f, which Parse accepted.
func (o Output[T]) Write(w io.Writer, f Format, v T) error {
	for _, fw := range o.offered() {
		if fw.format == f {
			return fw.write(w, v)
		}
	}
	return fmt.Errorf("--format %q: want one of %s", f, o.List())
}
