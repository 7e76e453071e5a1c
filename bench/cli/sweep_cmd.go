package cli

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/bench/sweep"
	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/results"
)

func flagNames(table []plan.Flag) []string {
	names := make([]string, len(table))
	for i, f := range table {
		names[i] = f.Name
	}
	return names
}

var (
	assertFlag = &cli.StringSliceFlag{Name: "assert", Usage: "threshold checked on every run, e.g. 'acquire.p99<10ms'; a failure exits 3", Category: "output"}
	countFlag  = &cli.IntFlag{Name: "count", Value: 1, Usage: "runs per cell (repeats show min/median/max)", Category: "output"}
)

// formatFlag is --format offering out's formats, its default first.
func formatFlag[T any](out results.Output[T]) *cli.StringFlag {
	return &cli.StringFlag{Name: "format", Value: string(out.Default()), Usage: "output: " + out.List(), Category: "output"}
}

// checkFormat reads --format as one of out's formats.
func checkFormat[T any](c *cli.Context, out results.Output[T]) (results.Format, error) {
	f, err := out.Parse(c.String("format"))
	if err != nil {
		return "", usageError{msg: err.Error()}
	}
	return f, nil
}

func sweepCommand() *cli.Command {
	table, flags, _ := runFlagsOf("sweep")
	return &cli.Command{
		Name:  "sweep",
		Usage: "run a grid of any run flags given as lists; every cell is stored as an ordinary result",
		UsageText: "lockbench sweep --concurrency 1,8,32 --topology single,redlock:3 --ttl 1s,5s [-d 2s] [--count N]\n" +
			"   lockbench sweep -f plan.yaml",
		Flags: append(flags,
			&cli.StringFlag{Name: "file", Aliases: []string{"f"}, Usage: "sweep plan in YAML: " + sweep.FileHelp, Category: "output"},
			countFlag, assertFlag, formatFlag(sweepOutput()), columnsFlag),
		Action: func(c *cli.Context) error {
			format, err := checkFormat(c, sweepOutput())
			if err != nil {
				return err
			}
			columns, err := viewColumns(c, results.SweepView(), string(format))
			if err != nil {
				return err
			}
			g, err := gridFromCLI(c, table)
			if err != nil {
				return err
			}
			asserts, err := parseAsserts(append(c.StringSlice("assert"), g.Asserts...))
			if err != nil {
				return err
			}
			if len(g.Axes) == 0 {
				return usageError{msg: "sweep: no axis to vary; give a run flag as a list (e.g. -c 1,8,32) or axes: in -f; for one run: lockbench run"}
			}
			cells, err := g.Cells()
			if err != nil {
				return err
			}
			crs, err := sweep.Run(c.Context, g, cells, storeRunner(c), progressFor(c))
			if err != nil && c.Context.Err() == nil {
				return err
			}
			if err := sweepOutput().Write(c.App.Writer, format, sweepGrid{g, crs, columns}); err != nil {
				return err
			}
			if c.Context.Err() != nil {
				return partialGrid(crs, len(cells)*g.Count)
			}
			return checkAsserts(c, asserts, allResults(crs))
		},
	}
}

// sweepGrid is what sweep prints: the grid, its cells' results and the
// table's columns.
type sweepGrid struct {
	grid    sweep.Grid
	cells   []sweep.CellResult
	columns []string
}

// sweepOutput is sweep's output in each format it offers.
func sweepOutput() results.Output[sweepGrid] {
	return results.Output[sweepGrid]{
		Table: func(w io.Writer, s sweepGrid) error { return sweep.WriteTable(w, s.grid, s.cells, s.columns) },
		JSON:  func(w io.Writer, s sweepGrid) error { return sweep.WriteJSON(w, s.grid, s.cells) },
		CSV:   func(w io.Writer, s sweepGrid) error { return sweep.WriteCSV(w, s.grid, s.cells) },
	}
}

// finishedCells drops the cells an interruption left without any run.
func finishedCells(crs []sweep.CellResult) []sweep.CellResult {
	var out []sweep.CellResult
	for _, cr := range crs {
		if len(cr.Results) > 0 {
			out = append(out, cr)
		}
	}
	return out
}

// partialGrid says how far an interrupted grid got: the cells printed are
// the ones that finished, a cell marked partial was cut short.
func partialGrid(crs []sweep.CellResult, total int) error {
	return fmt.Errorf("interrupted after %d of %d runs; the table shows the cells that ran, those marked partial were cut short",
		len(allResults(crs)), total)
}

// gridFromCLI builds the grid from -f (if given) and the flags: a flag given
// as a list becomes an axis; a single value joins the base, over the file's.
func gridFromCLI(c *cli.Context, table []plan.Flag) (sweep.Grid, error) {
	g := sweep.Grid{Base: plan.Values{}, Count: 1}
	if path := c.String("file"); path != "" {
		var err error
		if g, err = sweep.LoadFile(path); err != nil {
			return g, usageError{msg: err.Error()}
		}
	}
	base, axes := sweep.AxesFromValues(givenValues(c, table), flagNames(table))
	for k, v := range base {
		g.Base[k] = v
	}
	g.Axes = mergeAxes(g.Axes, axes)
	if c.IsSet("count") {
		g.Count = c.Int("count")
	}
	if err := plan.CheckRepeats(g.Count); err != nil {
		return g, err
	}
	return g, nil
}

// mergeAxes lets flag axes replace the file's axes of the same flag.
func mergeAxes(file, flags []sweep.Axis) []sweep.Axis {
	out := append([]sweep.Axis(nil), file...)
	for _, a := range flags {
		replaced := false
		for i := range out {
			if out[i].Flag == a.Flag {
				out[i], replaced = a, true
			}
		}
		if !replaced {
			out = append(out, a)
		}
	}
	return out
}

// storeRunner executes one cell quietly and stores its result, recorded for
// the command's next-step hint.
func storeRunner(c *cli.Context) sweep.Runner {
	batch := plan.Batch{Build: buildVersion(c), Stored: storedOf(c).add}
	return batch.RunValues
}

// progressFor draws a progress bar with ETA on a terminal, and a plain line a
// run elsewhere (a CI log), on stderr.
func progressFor(c *cli.Context) sweep.Progress {
	w := c.App.ErrWriter
	if c.Bool("quiet") {
		return nil
	}
	start := time.Now()
	term := isTerminal(w)
	return func(done, total int, label string) {
		eta := "?"
		if done > 0 {
			eta = (time.Since(start) / time.Duration(done) * time.Duration(total-done)).Round(time.Second).String()
		}
		line := fmt.Sprintf("[%s] %d/%d runs, ETA %s  %s", bar(done, total, 20), done, total, eta, label)
		if term {
			fmt.Fprintf(w, "\r\033[K%s", line)
			if done+1 == total {
				defer fmt.Fprintln(w)
			}
			return
		}
		fmt.Fprintln(w, line)
	}
}

func bar(done, total, width int) string {
	n := 0
	if total > 0 {
		n = done * width / total
	}
	return strings.Repeat("#", n) + strings.Repeat(".", width-n)
}

func allResults(crs []sweep.CellResult) []*results.Result {
	var out []*results.Result
	for _, cr := range crs {
		out = append(out, cr.Results...)
	}
	return out
}

func capacityCommand() *cli.Command {
	table, flags, _ := runFlagsOf("capacity")
	return &cli.Command{
		Name:  "capacity",
		Usage: "ramp load on each topology until an SLO breaks or throughput stops growing; report the saturation point and the knee",
		UsageText: "lockbench capacity --topology single --topology redlock:5 --slo 'p99<5ms' [--slo 'incidents=0']\n" +
			"   lockbench capacity --rate 1000 --slo 'p99<5ms'   (open loop: ramps the request rate)",
		Flags: append(flags,
			&cli.StringSliceFlag{Name: "slo", Usage: "service level to keep, e.g. 'p99<5ms' or 'incidents=0' (same language as --assert; a bare pNN reads time_to_acquire, the caller's wait)", Category: "output"},
			&cli.Float64Flag{Name: "start", Value: 1, DefaultText: "1, or with --rate the rate, or with --pipeline auto 16", Usage: "first load: concurrency, or requests/s with --rate", Category: "output"},
			&cli.Float64Flag{Name: "max", Value: 128, DefaultText: "128, or with --rate 64 × the rate, or with --pipeline auto 4096", Usage: "highest load tried", Category: "output"},
			&cli.Float64Flag{Name: "factor", Value: 2, Usage: "load multiplier per step", Category: "output"},
			reportFlag, assertFlag, formatFlag(capacityOutput()), columnsFlag),
		Action: func(c *cli.Context) error {
			format, err := checkFormat(c, capacityOutput())
			if err != nil {
				return err
			}
			columns, err := viewColumns(c, results.CapacityView(), string(format))
			if err != nil {
				return err
			}
			slo, err := parseAsserts(c.StringSlice("slo"))
			if err != nil {
				return err
			}
			asserts, err := parseAsserts(c.StringSlice("assert"))
			if err != nil {
				return err
			}
			// Shorter steps than a lone run: a ramp has many.
			given, err := plan.WithCommandDefaults("capacity", givenValues(c, table))
			if err != nil {
				return err
			}
			if !plan.HistoryPerRun(given.Get("history")) {
				return plan.HistoryPerRunError("capacity makes many runs")
			}
			ramp := sweep.DefaultRamp()
			ramp.Start, ramp.Max, ramp.Factor = c.Float64("start"), c.Float64("max"), c.Float64("factor")
			ramp, loadFlag, err := sweep.CapacityRamp(given, ramp, c.IsSet("start"), c.IsSet("max"))
			if err != nil {
				return usageError{msg: err.Error()}
			}
			if err := plan.CheckCommandRefusals("capacity", givenValues(c, table)); err != nil {
				return err
			}
			if lock := tunedLock(given); lock != "" {
				// The table names topologies; a user's own lock is named here.
				fmt.Fprintf(c.App.ErrWriter, "capacity: %s\n", strings.TrimSuffix(lock, ", "))
			}
			search := sweep.CapacitySearch{Given: given, Ramp: ramp, LoadFlag: loadFlag, SLO: slo, Run: storeRunner(c)}
			if !c.Bool("quiet") {
				search.OnStep = func(topo, load string) { fmt.Fprintf(c.App.ErrWriter, "capacity %s: %s %s\n", topo, loadFlag, load) }
			}
			caps, all, err := search.Search(c.Context)
			if err != nil {
				return err
			}
			if err := capacityOutput().Write(c.App.Writer, format, capacityFound{caps, loadFlag, columns, all}); err != nil {
				return err
			}
			if c.Context.Err() != nil {
				return fmt.Errorf("interrupted after %d step(s); the steps that ran are shown", len(all))
			}
			if path := c.String("report"); path != "" {
				extras := results.ReportExtras{Curves: sweep.CapacityCurves(caps, loadFlag), Checks: results.CheckAll(append(slo, asserts...), all)}
				if err := writeReportWith(c, path, all, extras); err != nil {
					return err
				}
			}
			return checkAsserts(c, asserts, all)
		},
	}
}

// capacityFound is what capacity prints: each topology's ramp, the load it
// ramped, the table's columns and every step's result.
type capacityFound struct {
	caps     []sweep.Capacity
	loadFlag string
	columns  []string
	all      []*results.Result
}

// capacityOutput is capacity's output in each format it offers.
func capacityOutput() results.Output[capacityFound] {
	return results.Output[capacityFound]{
		Table: func(w io.Writer, f capacityFound) error {
			if f.columns == nil {
				return sweep.WriteCapacity(w, f.caps, f.loadFlag)
			}
			byID := map[string]*results.Result{}
			for _, r := range f.all {
				byID[r.ID] = r
			}
			return sweep.WriteCapacityColumns(w, f.caps, f.loadFlag, f.columns, byID)
		},
		JSON: func(w io.Writer, f capacityFound) error { return writeJSON(w, f.caps) },
		CSV:  func(w io.Writer, f capacityFound) error { return sweep.WriteCapacityCSV(w, f.caps, f.loadFlag) },
	}
}

func tuneTTLCommand() *cli.Command {
	table, flags, refused := runFlagsOf("tune-ttl")
	return &cli.Command{
		Name:      "tune-ttl",
		Usage:     "sweep TTL × renewal interval for a workload and recommend the shortest-blocking safe cell",
		UsageText: "lockbench tune-ttl --workload long-work [--ttls 1s,2s,4s] [--renews 0,ttl/2,ttl/3] [--max-incident-rate 1e-4]",
		Flags: append(flags,
			&cli.StringFlag{Name: "ttls", Value: "1s,2s,4s", Usage: "TTLs to try (on etcd:N: 2s,4s,8s)", Category: "output"},
			&cli.StringFlag{Name: "renews", Value: "0,ttl/2,ttl/3", Usage: "renewal intervals to try (0 is none; ttl/N scales with each TTL)", Category: "output"},
			&cli.Float64Flag{Name: "max-incident-rate", Value: 1e-4, Usage: "highest acceptable share of acquisitions whose work outlived the lease", Category: "output"},
			countFlag, reportFlag, formatFlag(tuneOutput())),
		Action: func(c *cli.Context) error {
			format, err := checkFormat(c, tuneOutput())
			if err != nil {
				return err
			}
			if err := refuseSet(c, refused); err != nil {
				return err
			}
			if err := plan.CheckRepeats(c.Int("count")); err != nil {
				return err
			}
			maxRate := c.Float64("max-incident-rate")
			if maxRate < 0 || maxRate > 1 {
				return usageError{msg: fmt.Sprintf("--max-incident-rate %v: want a share from 0 to 1", maxRate)}
			}
			given := givenValues(c, table)
			if !plan.HistoryPerRun(given.Get("history")) {
				return plan.HistoryPerRunError("tune-ttl makes many runs")
			}
			// Holders crash (so blocked time is measured) and waiters on a
			// crashed holder's key back off, unless the user or the
			// workload says otherwise: tune-ttl's own defaults.
			base, err := plan.WithCommandDefaults("tune-ttl", given)
			if err != nil {
				return err
			}
			resolved, err := plan.Resolve(base)
			if err != nil {
				return err
			}
			g := sweep.Grid{Base: base, Count: c.Int("count"), Axes: []sweep.Axis{
				{Flag: "ttl", Values: sweep.ParseList(ttlsOf(c, given["topology"]))},
				{Flag: "renew-every", Values: sweep.ParseList(c.String("renews"))},
			}}
			cells, err := g.Cells()
			if err != nil {
				return tuneAxisError(err)
			}
			fmt.Fprintf(c.App.ErrWriter, "tune-ttl: %sworkload %s, %d cells of %s each, crash-prob %s, retry %s\n",
				tunedLock(given), base.Get("workload"), len(cells), base.Get("duration"), orDefault(base.Get("crash-prob"), resolved.Get("crash-prob")),
				orDefault(base.Get("retry"), resolved.Get("retry")))
			crs, err := sweep.Run(c.Context, g, cells, storeRunner(c), progressFor(c))
			if err != nil && c.Context.Err() == nil {
				return err
			}
			crs = finishedCells(crs)
			tc := sweep.TuneCells(g, crs, maxRate)
			rec := sweep.Recommend(tc, maxRate)
			if path := c.String("report"); path != "" {
				extras := results.ReportExtras{HeatMaps: sweep.TuneHeatMaps(g, tc, rec)}
				if err := writeReportWith(c, path, allResults(crs), extras); err != nil {
					return err
				}
			}
			err = tuneOutput().Write(c.App.Writer, format, tuned{tc, rec})
			if err == nil && c.Context.Err() != nil {
				return partialGrid(crs, len(cells)*max(1, g.Count))
			}
			return err
		},
	}
}

// tuned is what tune-ttl prints: its cells and the recommendation.
type tuned struct {
	cells []sweep.TuneCell
	rec   sweep.Recommendation
}

// tuneOutput is tune-ttl's output in each format it offers.
func tuneOutput() results.Output[tuned] {
	return results.Output[tuned]{
		Table: func(w io.Writer, t tuned) error { return sweep.WriteTune(w, t.cells, t.rec) },
		JSON: func(w io.Writer, t tuned) error {
			return writeJSON(w, map[string]any{"cells": t.cells, "recommendation": t.rec})
		},
		CSV: func(w io.Writer, t tuned) error { return sweep.WriteTuneCSV(w, t.cells, t.rec) },
	}
}

// refuseSet refuses run flags a command sets itself: given, they would be
// ignored. why maps each such flag to what to use instead.
func refuseSet(c *cli.Context, why map[string]string) error {
	for _, name := range sortedNames(why) {
		if c.IsSet(name) {
			return usageError{msg: fmt.Sprintf("--%s: %s %s", name, c.Command.Name, why[name])}
		}
	}
	return nil
}

func sortedNames(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func orDefault(v, d string) string {
	if v == "" {
		return d
	}
	return v
}

var reportFlag = &cli.StringFlag{Name: "report", Usage: "also write the HTML report (with this command's chart) to FILE", Category: "output"}

// tunedLock names the lock tune-ttl or capacity was given ("lock X, "), so that a
// user's own lock (exec:, def:, go:) is named beside the table; "" when
// the topology's default lock runs.
func tunedLock(given plan.Values) string {
	lock := given.Get("lock")
	if f := given.Get("lock-def"); f != "" {
		lock = lockimpl.DefPrefix + f
	}
	if lock == "" {
		return ""
	}
	return "lock " + lock + ", "
}

// ttlsOf is tune-ttl's --ttls, or its default for the topologies.
func ttlsOf(c *cli.Context, topologies []string) string {
	if c.IsSet("ttls") {
		return c.String("ttls")
	}
	return sweep.DefaultTTLs(topologies)
}

// tuneAxisError names tune-ttl's own flags in an error about its grid's
// axes: the user gave --ttls and --renews, and --ttl is refused here.
func tuneAxisError(err error) error {
	var ie *plan.InputError
	if !errors.As(err, &ie) {
		return err
	}
	own := map[string]string{"ttl": "ttls", "renew-every": "renews"}
	if name, ok := own[ie.Flag]; ok {
		msg := strings.TrimPrefix(strings.TrimPrefix(ie.Msg, "--"+ie.Flag+" "), "--"+ie.Flag+":")
		return &plan.InputError{Flag: name, Msg: strings.TrimSpace(msg)}
	}
	return err
}
