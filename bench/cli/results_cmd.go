package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/lockbench/lockbench/bench/history"
	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/results"
)

var outFlag = &cli.StringFlag{Name: "out", Value: "./runs", Usage: "directory of result files", EnvVars: []string{"LOCKBENCH_OUT"}}

func resultsCommand() *cli.Command {
	return &cli.Command{
		Name:  "results",
		Usage: "list, show, compare, merge, export and report stored results",
		Subcommands: []*cli.Command{
			{Name: "ls", Usage: "one line a run, newest first", Flags: []cli.Flag{outFlag, formatFlag(listOutput()),
				&cli.StringSliceFlag{Name: "tag", Usage: "only runs with this key=value tag (repeatable: all must match)"}}, Action: resultsLs},
			{Name: "show", Usage: "the summary of one run, or min/median/max over a group of repeats", ArgsUsage: "ID|GROUP|FILE",
				Flags: []cli.Flag{outFlag, formatFlag(showOutput())}, Action: resultsShow},
			{Name: "compare", Usage: "runs (or groups of repeats) side by side with ratios to the first", ArgsUsage: "A B [C…]",
				Flags: []cli.Flag{outFlag, formatFlag(results.CompareOutput()), columnsFlag}, Action: resultsCompare},
			{Name: "merge", Usage: "merge results of generators that ran together into one", ArgsUsage: "A B [C…]  (or --run-id ID)",
				Flags: []cli.Flag{outFlag, &cli.StringFlag{Name: "o", Usage: "file to write the merged result to (default: <out>/merged-<id>.json)"},
					&cli.StringFlag{Name: "run-id", Usage: "merge every generator of this run found in --out (<run-id>-g<i>.json)"}}, Action: resultsMerge},
			{Name: "export", Usage: "write .hgrm percentile files, summary CSV or series CSV", ArgsUsage: "ID|FILE",
				Flags: []cli.Flag{outFlag,
					&cli.StringFlag{Name: "hgrm", Usage: "directory for one .hgrm file per operation"},
					&cli.StringFlag{Name: "csv", Usage: "file for the summary CSV"},
					&cli.StringFlag{Name: "series-csv", Usage: "file for the per-second series CSV"}}, Action: resultsExport},
			{Name: "collect", Usage: "store the results generators printed to their logs (kubectl logs -l job-name=NAME | lockbench results collect)",
				Flags: []cli.Flag{outFlag, &cli.StringFlag{Name: "logs", Value: "-", Usage: "file of logs, - for standard input"}}, Action: resultsCollect},
			{Name: "report", Usage: "one self-contained offline HTML report of one or more runs", ArgsUsage: "ID… ",
				Flags: []cli.Flag{outFlag, &cli.StringFlag{Name: "o", Value: "report.html", Usage: "HTML file to write"}}, Action: resultsReport},
		},
	}
}

// listOutput is results ls's list of runs in each format it offers.
func listOutput() results.Output[[]*results.Result] {
	return results.Output[[]*results.Result]{
		Table: results.WriteList,
		JSON:  func(w io.Writer, rs []*results.Result) error { return writeJSON(w, results.ListEntries(rs)) },
		CSV:   func(w io.Writer, rs []*results.Result) error { return results.WriteListCSV(w, rs) },
	}
}

func resultsLs(c *cli.Context) error {
	format, err := checkFormat(c, listOutput())
	if err != nil {
		return err
	}
	want, err := plan.ParseTags(c.StringSlice("tag"))
	if err != nil {
		return usageError{msg: "--tag " + err.Error()}
	}
	dir := c.String("out")
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(c.App.ErrWriter, "no runs yet: %s does not exist (lockbench run stores its results there; --out names another directory)\n", dir)
		return nil
	}
	rs, skipped, err := results.List(dir)
	if err != nil {
		return err
	}
	for _, e := range skipped {
		fmt.Fprintf(c.App.ErrWriter, "skipped: %v\n", e)
	}
	if len(want) > 0 {
		rs = results.FilterTags(rs, want)
	}
	if len(rs) == 0 {
		fmt.Fprintf(c.App.ErrWriter, "no runs in %s%s\n", dir, map[bool]string{true: " with those tags", false: " yet"}[len(want) > 0])
		return nil
	}
	return listOutput().Write(c.App.Writer, format, rs)
}

// outSlip catches --out given a file name where -o was meant: for results
// subcommands --out is the runs directory.
func outSlip(c *cli.Context, ext string) error {
	if out := c.String("out"); c.IsSet("out") && strings.HasSuffix(out, ext) {
		return usageError{msg: fmt.Sprintf("--out %s: --out is the directory of result files; write the %s file with -o %s", out, ext, out)}
	}
	return nil
}

// resolve finds the runs each argument names (id, group, prefix or file).
func resolve(c *cli.Context, min int) ([][]*results.Result, error) {
	if c.NArg() < min {
		if min == 1 {
			return nil, usageError{msg: fmt.Sprintf("%s needs a run id, group id, label or file", c.Command.Name)}
		}
		return nil, usageError{msg: fmt.Sprintf("%s needs at least %d run ids, group ids, labels or files", c.Command.Name, min)}
	}
	var out [][]*results.Result
	for _, ref := range c.Args().Slice() {
		if strings.HasPrefix(ref, "-") {
			return nil, usageError{msg: fmt.Sprintf("%s: flags go before the run ids (got %s after them)", c.Command.Name, ref)}
		}
		rs, err := results.FindRuns(c.String("out"), ref)
		if err != nil {
			return nil, usageError{msg: err.Error()}
		}
		out = append(out, rs)
	}
	return out, nil
}

func flatten(groups [][]*results.Result) []*results.Result {
	var out []*results.Result
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

func resultsShow(c *cli.Context) error {
	format, err := checkFormat(c, showOutput())
	if err != nil {
		return err
	}
	groups, err := resolve(c, 1)
	if err != nil {
		return err
	}
	for _, rs := range groups {
		if err := showOutput().Write(c.App.Writer, format, rs); err != nil {
			return err
		}
	}
	return nil
}

// showOutput is what results show prints of what one argument names, in
// each format it offers: a run's summary, result file or summary CSV; a
// group's figures over its repeats.
func showOutput() results.Output[[]*results.Result] {
	return results.Output[[]*results.Result]{
		Table: func(w io.Writer, rs []*results.Result) error {
			if len(rs) == 1 {
				return results.WriteSummary(w, rs[0])
			}
			return eachGroup(rs, func(g results.Group) error { return results.WriteGroupSummary(w, g) })
		},
		JSON: func(w io.Writer, rs []*results.Result) error {
			if len(rs) == 1 {
				return writeJSON(w, rs[0])
			}
			return eachGroup(rs, func(g results.Group) error { return results.CompareGroups([]results.Group{g}).WriteJSON(w) })
		},
		CSV: func(w io.Writer, rs []*results.Result) error {
			if len(rs) == 1 {
				return results.WriteCSV(w, rs[0])
			}
			return eachGroup(rs, func(g results.Group) error { return results.CompareGroups([]results.Group{g}).WriteCSV(w) })
		},
	}
}

// eachGroup writes each group of repeats among rs, stopping at an error.
func eachGroup(rs []*results.Result, write func(results.Group) error) error {
	for _, g := range results.GroupRuns(rs) {
		if err := write(g); err != nil {
			return err
		}
	}
	return nil
}

func resultsCompare(c *cli.Context) error {
	format, err := checkFormat(c, results.CompareOutput())
	if err != nil {
		return err
	}
	columns, err := viewColumns(c, results.CompareView(), string(format))
	if err != nil {
		return err
	}
	groups, err := resolve(c, 2)
	if err != nil {
		return err
	}
	gs := make([]results.Group, len(groups))
	for i, rs := range groups {
		key := c.Args().Get(i)
		if len(rs) == 1 {
			key = rs[0].ID
		}
		gs[i] = results.Group{Key: key, Runs: rs}
	}
	gs = results.NameGroups(gs)
	cmp := results.CompareGroups(gs)
	if len(columns) > 0 {
		figs, _ := results.CompareView().Figures(columns)
		cmp = results.CompareFigures(gs, figs)
	}
	return results.CompareOutput().Write(c.App.Writer, format, cmp)
}

func resultsMerge(c *cli.Context) error {
	if err := outSlip(c, ".json"); err != nil {
		return err
	}
	var runs []*results.Result
	if id := c.String("run-id"); id != "" {
		if c.NArg() > 0 {
			return usageError{msg: "merge takes --run-id or run ids, not both"}
		}
		var err error
		if runs, err = results.Generators(c.String("out"), id); err != nil {
			return usageError{msg: err.Error()}
		}
	} else {
		groups, err := resolve(c, 1)
		if err != nil {
			return err
		}
		runs = flatten(groups)
	}
	if len(runs) < 2 {
		return usageError{msg: fmt.Sprintf("merge needs at least 2 results, found %d", len(runs))}
	}
	merged, err := results.Merge(runs)
	if err != nil {
		return usageError{msg: err.Error()}
	}
	path := c.String("o")
	histPath := filepath.Join(c.String("out"), merged.ID+".history.jsonl.gz")
	if path != "" {
		histPath = strings.TrimSuffix(path, ".json") + ".history.jsonl.gz"
	}
	if merged.History, err = mergeHistories(c, runs, histPath); err != nil {
		return err
	}
	if path == "" {
		path, err = storeResult(c, c.String("out"), merged)
	} else {
		merged.ID = strings.TrimSuffix(filepath.Base(path), ".json")
		var buf bytes.Buffer
		if err = writeJSON(&buf, merged); err == nil {
			err = results.WriteFileAtomic(path, buf.Bytes())
		}
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(c.App.ErrWriter, "merged %d runs into %s\n", len(merged.MergedFrom), path)
	if c.String("o") != "" {
		// Outside the store: shown by its path.
		defer writeNext(c.App.ErrWriter, "lockbench results show "+shellWord(path))
	}
	return results.WriteSummary(c.App.Writer, merged)
}

func resultsExport(c *cli.Context) error {
	if c.NArg() != 1 {
		return usageError{msg: "export takes one run id or file"}
	}
	if c.String("hgrm") == "" && c.String("csv") == "" && c.String("series-csv") == "" {
		return usageError{msg: "export needs --hgrm DIR, --csv FILE or --series-csv FILE"}
	}
	r, err := results.Find(c.String("out"), c.Args().First())
	if err != nil {
		return usageError{msg: err.Error()}
	}
	var wrote, next []string
	if dir := c.String("hgrm"); dir != "" {
		files, err := results.ExportHGRM(dir, r)
		if err != nil {
			return err
		}
		for _, f := range files {
			fmt.Fprintln(c.App.Writer, f)
		}
		wrote = append(wrote, fmt.Sprintf("%s (percentile distributions, one per operation) in %s", results.Count(int64(len(files)), ".hgrm file"), dir))
		next = append(next, "plot "+filepath.Join(dir, "*.hgrm")+" with HdrHistogram's plotter (plotFiles.html)")
	}
	for _, out := range []struct {
		path, what string
		write      func(*bytes.Buffer) error
	}{
		{c.String("csv"), "every figure, one a row", func(b *bytes.Buffer) error { return results.WriteCSV(b, r) }},
		{c.String("series-csv"), "the per-second series", func(b *bytes.Buffer) error { return results.WriteSeriesCSV(b, r) }},
	} {
		if out.path == "" {
			continue
		}
		var buf bytes.Buffer
		if err := out.write(&buf); err != nil {
			return err
		}
		if err := results.WriteFileAtomic(out.path, buf.Bytes()); err != nil {
			return err
		}
		fmt.Fprintln(c.App.Writer, out.path)
		wrote = append(wrote, fmt.Sprintf("%s (%s)", out.path, out.what))
	}
	fmt.Fprintf(c.App.ErrWriter, "exported %s: %s\n", r.ID, strings.Join(wrote, "; "))
	writeNext(c.App.ErrWriter, append(next, "lockbench results report"+outArg(c.String("out"))+" -o report.html "+r.ID)...)
	return nil
}

func resultsReport(c *cli.Context) error {
	if err := outSlip(c, ".html"); err != nil {
		return err
	}
	groups, err := resolve(c, 1)
	if err != nil {
		return err
	}
	return writeReport(c, c.String("o"), flatten(groups))
}

// writeReport renders the HTML report of rs into path.
func writeReport(c *cli.Context, path string, rs []*results.Result) error {
	return writeReportWith(c, path, rs, results.ReportExtras{})
}

// writeReportWith renders the report of rs with a command's own charts.
func writeReportWith(c *cli.Context, path string, rs []*results.Result, extras results.ReportExtras) error {
	var buf bytes.Buffer
	if err := results.WriteReportWith(&buf, rs, extras); err != nil {
		return err
	}
	if err := results.WriteFileAtomic(path, buf.Bytes()); err != nil {
		return err
	}
	fmt.Fprintf(c.App.ErrWriter, "report written to %s\n", path)
	return nil
}

// mergeHistories merges the generators' histories (run --history) into
// dest when every generator kept one, and returns dest; "" when none did.
func mergeHistories(c *cli.Context, runs []*results.Result, dest string) (string, error) {
	var paths []string
	for _, r := range runs {
		if r.History != "" {
			paths = append(paths, r.History)
		}
	}
	switch {
	case len(paths) == 0:
		return "", nil
	case len(paths) < len(runs):
		fmt.Fprintf(c.App.ErrWriter, "histories not merged: only %d of %d generators kept one (--history)\n", len(paths), len(runs))
		return "", nil
	}
	h, err := history.ReadFiles(paths)
	if err != nil {
		return "", fmt.Errorf("merge histories: %w", err)
	}
	if err := history.WriteFile(dest, h); err != nil {
		return "", fmt.Errorf("merge histories: %w", err)
	}
	fmt.Fprintf(c.App.ErrWriter, "merged %d histories into %s (lockbench check %s)\n", len(paths), dest, dest)
	return dest, nil
}
