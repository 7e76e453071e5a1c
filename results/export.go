package results

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// HGRM output parameters: five reporting ticks per half distance to 100%,
// as HdrHistogram's own tools default to, and microseconds scaled to
// milliseconds, the unit HdrHistogram's plotter labels its axis with.
const (
	hgrmTicksPerHalfDistance = 5
	hgrmValueScale           = 1000
)

// WriteHGRM writes h (microseconds) in HdrHistogram's percentile
// distribution format, values in milliseconds: the text HdrHistogram's
// outputPercentileDistribution and hdrhistogram-go's PercentilesPrint produce
// and HdrHistogram's plotter reads. For an empty histogram it writes the
// header and footer only, as the Java implementation does, instead of the
// single bogus "0.000 1.0 0 inf" line PercentilesPrint emits.
func WriteHGRM(w io.Writer, h *hdr.Histogram) error {
	var buf bytes.Buffer
	if _, err := h.PercentilesPrint(&buf, hgrmTicksPerHalfDistance, hgrmValueScale); err != nil {
		return fmt.Errorf("format hgrm: %w", err)
	}
	out := buf.Bytes()
	if h.TotalCount() == 0 {
		out = headerAndFooterOnly(out)
	}
	if _, err := w.Write(out); err != nil {
		return fmt.Errorf("write hgrm: %w", err)
	}
	return nil
}

// headerAndFooterOnly drops the distribution lines, keeping the column
// header, the blank line after it and the "#[" footer.
func headerAndFooterOnly(b []byte) []byte {
	var out bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 0; sc.Scan(); n++ {
		line := sc.Text()
		if n < 2 || strings.HasPrefix(line, "#") {
			out.WriteString(line + "\n")
		}
	}
	return out.Bytes()
}

// HGRMFileName is the name ExportHGRM gives op's distribution of run id.
func HGRMFileName(id, op string) string { return id + "." + op + ".hgrm" }

// ExportHGRM writes one .hgrm file per operation r recorded into dir
// (created if missing), each atomically, and returns their paths in report
// order. Operations with no recorded value are skipped.
func ExportHGRM(dir string, r *Result) ([]string, error) {
	ops := opsPresent([]*Result{r})
	if len(ops) == 0 {
		return nil, fmt.Errorf("export %s: the run recorded no latencies", r.ID)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("export dir %s: %w", dir, err)
	}
	var paths []string
	for _, op := range ops {
		h, err := DecodeHistogram(r.Ops[op].HDR)
		if err != nil {
			return paths, fmt.Errorf("export %s op %s: %w", r.ID, op, err)
		}
		var buf bytes.Buffer
		if err := WriteHGRM(&buf, h); err != nil {
			return paths, fmt.Errorf("export %s op %s: %w", r.ID, op, err)
		}
		path := filepath.Join(dir, HGRMFileName(r.ID, op))
		if err := writeAtomic(path, buf.Bytes()); err != nil {
			return paths, fmt.Errorf("export %s op %s: %w", r.ID, op, err)
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// WriteCSV writes r's summary as CSV in long form, one figure a line:
// id, key (the figure's path in the result JSON), metric, unit, value. Long
// form keeps one header for every run: several runs are one table, each run's
// figures under the one header line. A figure a run did not measure has no line.
func WriteCSV(w io.Writer, rs ...*Result) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"id", "key", "metric", "unit", "value"})
	for _, r := range rs {
		for _, f := range FiguresFor([]*Result{r}) {
			if v, err := f.Value(r); err == nil {
				_ = cw.Write([]string{r.ID, f.Key, f.Label, f.Unit, num(v)})
			}
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write csv of %d run(s): %w", len(rs), err)
	}
	return nil
}

// offeredText is a second's offered requests, or "" when none were recorded.
func offeredText(n *int64) string {
	if n == nil {
		return ""
	}
	return strconv.FormatInt(*n, 10)
}

// WriteSeriesCSV writes r's per-second series as CSV: elapsed_s, acquired,
// attempts, p99_us, errors, incidents, the faults that fired in that second
// joined by ";", and offered: the requests meant to start in that second
// (open loop; empty in closed loop).
func WriteSeriesCSV(w io.Writer, r *Result) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"elapsed_s", "acquired", "attempts", "p99_us", "errors", "incidents", "faults", "offered"})
	for _, p := range r.Series {
		_ = cw.Write([]string{num(p.ElapsedS), strconv.FormatInt(p.Acquired, 10), strconv.FormatInt(p.Attempts, 10),
			num(p.P99US), strconv.FormatInt(p.Errors, 10), strconv.FormatInt(p.Incidents, 10), strings.Join(p.Faults, ";"), offeredText(p.Offered)})
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write series csv of %s: %w", r.ID, err)
	}
	return nil
}
