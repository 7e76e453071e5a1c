package job

import (
	"bufio"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/lockbench/lockbench/results"
)

// A run's history rides in a log beside its result, between markers that
// name the run: its gzip'd bytes, base64'd (an alphabet without '[', so
// that no line of it looks like kubectl's --prefix), in lines of at most
// markedLine characters.
const (
	historyBegin = "=== lockbench history begin %s ==="
	historyEnd   = "=== lockbench history end %s ==="
)

// HistoryBeginMarker is the line before run id's history in a log.
func HistoryBeginMarker(id string) string { return fmt.Sprintf(historyBegin, id) }

// HistoryEndMarker is the line after run id's history.
func HistoryEndMarker(id string) string { return fmt.Sprintf(historyEnd, id) }

// historyMarker matches either history marker, capturing which and the
// run id.
var historyMarker = regexp.MustCompile(`^=== lockbench history (begin|end) (\S+) ===$`)

// runIDPattern is what a run id in a history marker must look like: a
// sink names a file after it, so nothing that could leave its directory.
var runIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// ValidRunID says whether id can name a history: letters, digits, '.',
// '_' and '-', never "..", so a file named after it stays in its
// directory.
func ValidRunID(id string) bool { return runIDPattern.MatchString(id) && !strings.Contains(id, "..") }

// WriteMarkedHistory prints run id's history between its markers for
// CollectWith: gz is the history's gzip'd bytes (a history file whose
// name ends in .gz, as a run writes one into a --history directory).
func WriteMarkedHistory(w io.Writer, id string, gz io.Reader) error {
	if !ValidRunID(id) {
		return fmt.Errorf("run id %q: want letters, digits, '.', '_' and '-'", id)
	}
	bw := bufio.NewWriter(w)
	_, _ = bw.WriteString(HistoryBeginMarker(id) + "\n")
	// Whole groups of three bytes make whole lines of four characters,
	// each line decodable on its own.
	buf := make([]byte, markedLine/4*3)
	line := make([]byte, markedLine+1)
	for {
		n, err := io.ReadFull(gz, buf)
		if n > 0 {
			m := base64.StdEncoding.EncodedLen(n)
			base64.StdEncoding.Encode(line, buf[:n])
			line[m] = '\n'
			if _, werr := bw.Write(line[:m+1]); werr != nil {
				return werr
			}
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("run %s: its history: %w", id, err)
		}
	}
	_, _ = bw.WriteString(HistoryEndMarker(id) + "\n")
	return bw.Flush()
}

// HistoryWriter takes the gzip'd bytes of one history CollectWith found.
// Once the logs are read it is told Keep, when the history came whole and
// its run's result is in the logs, or else Drop: exactly one, once.
type HistoryWriter interface {
	io.Writer
	Keep() error
	Drop()
}

// HistorySink opens the writer of run id's history (id is ValidRunID's),
// for each history CollectWith meets: the same run's twice, twice.
type HistorySink func(id string) (HistoryWriter, error)

// Collected is what CollectWith found in the logs.
type Collected struct {
	// Results are the results in log order, but a run's whose history
	// was cut.
	Results []*results.Result
	// Histories are the runs whose history the sink kept, each with its
	// result among Results.
	Histories map[string]bool
}
