package plan

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/bench/history"
	"github.com/lockbench/lockbench/results"
)

// HistoryIDMark in a --history path is replaced by each run's id.
const HistoryIDMark = "{id}"

// HistoryOff is the --history value that keeps none (a sweep axis can
// compare runs with and without a history: --history off,DIR/).
const HistoryOff = "off"

// HistoryPath is where run id's history goes for the --history value given:
// a directory (an existing one, or a path ending in /) gets ID.history.jsonl.gz,
// {id} in a path is replaced by the id, and any other path is used as it is.
func HistoryPath(given, id string) string {
	switch {
	case given == "" || given == HistoryOff:
		return ""
	case strings.Contains(given, HistoryIDMark):
		return strings.ReplaceAll(given, HistoryIDMark, id)
	case strings.HasSuffix(given, "/") || isDir(given):
		return filepath.Join(given, id+".history.jsonl.gz")
	}
	return given
}

// HistoryPerRun reports whether given names one file per run, as a command
// that runs several (sweep, scenario, lock-cost, run over several
// configurations) needs: one file would hold only the last run.
func HistoryPerRun(given string) bool {
	return given == "" || given == HistoryOff || strings.Contains(given, HistoryIDMark) || strings.HasSuffix(given, "/") || isDir(given)
}

// HistoryPerRunError is the message for a single file given where runs are many.
func HistoryPerRunError(runs string) error {
	return badInput("history", "%s: one file would hold only the last run's history; give a DIR/ or a FILE with %s in it", runs, HistoryIDMark)
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// checkHistoryPath refuses a history path whose directory does not exist.
func checkHistoryPath(given string) error {
	if given == "" || given == HistoryOff {
		return nil
	}
	dir := filepath.Dir(strings.ReplaceAll(given, HistoryIDMark, "x"))
	if strings.HasSuffix(given, "/") {
		dir = given
	}
	if !isDir(dir) {
		return fmt.Errorf("%s: directory %s does not exist; want a FILE in an existing directory, a DIR/, or a FILE with %s", given, dir, HistoryIDMark)
	}
	return nil
}

// historyRecording is a run's history on its way to disk.
type historyRecording struct {
	w      *history.Writer
	path   string
	closed bool
}

// abort closes a history that finish did not: the run ended before its
// result was whole.
func (hr *historyRecording) abort() {
	if !hr.closed {
		hr.closed = true
		hr.w.Abort()
	}
}

// startHistory opens run id's history when the plan asks for one.
func startHistory(pl Plan, id, prefix, lockName string, fencing bool, resource string) (*historyRecording, error) {
	path := HistoryPath(pl.History, id)
	if path == "" {
		return nil, nil
	}
	runID := pl.RunID
	if runID == "" {
		runID = id
	}
	h := history.Header{RunID: runID, Generator: pl.GeneratorID, Generators: max(1, pl.Generators), Origin: time.Now(),
		KeyPrefix: prefix, Lock: lockName, Fencing: fencing, TTLNS: int64(pl.Workload.TTL),
		DriftNS: int64(history.DriftAllowance(pl.Workload.TTL)), Resource: resource}
	w, err := history.Create(path, h, pl.Bench.Concurrency)
	if err != nil {
		return nil, fmt.Errorf("--history: %w", err)
	}
	return &historyRecording{w: w, path: path}, nil
}

// finish writes the faults and the trailer and closes the file.
func (hr *historyRecording) finish(m *bench.Measurement, r *results.Result) error {
	var faults []history.Fault
	ws := hr.w.Since(m.WindowStart)
	for _, f := range r.Faults {
		hf := history.Fault{Spec: f.Spec, Node: f.Node, StartNS: ws + int64(f.AtS*1e9)}
		if f.EndS > 0 {
			hf.EndNS = ws + int64(f.EndS*1e9)
		}
		faults = append(faults, hf)
	}
	hr.closed = true
	err := hr.w.Close(faults, history.Trailer{WindowStartNS: ws, WindowEndNS: ws + int64(m.Elapsed), Partial: m.Partial})
	if err == nil {
		r.History = hr.path
	}
	return err
}
