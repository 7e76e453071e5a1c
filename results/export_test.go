package results

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteHGRM(t *testing.T) {
	h := histOf(t, tailValues(10000, 120, 0.7))
	var got, lib bytes.Buffer
	if err := WriteHGRM(&got, h); err != nil {
		t.Fatal(err)
	}
	if _, err := h.PercentilesPrint(&lib, 5, 1000); err != nil {
		t.Fatal(err)
	}
	if got.String() != lib.String() {
		t.Error("WriteHGRM differs from hdrhistogram-go's PercentilesPrint(5, 1000)")
	}
	golden(t, "acquire.hgrm", got.Bytes())

	var empty bytes.Buffer
	if err := WriteHGRM(&empty, NewHistogram()); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(empty.String(), "\n"), "\n")
	if len(lines) != 5 || !strings.Contains(lines[0], "Percentile") || !strings.Contains(lines[3], "Total count    =            0") {
		t.Errorf("empty histogram hgrm = %q, want header and footer only", empty.String())
	}
}

func TestExportHGRM(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "hgrm")
	r := fixture(t, "run-a", fixtureOpts{})
	paths, err := ExportHGRM(dir, r)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range paths {
		names = append(names, filepath.Base(p))
	}
	want := "run-a.acquire.hgrm run-a.time_to_acquire.hgrm run-a.release.hgrm run-a.hold.hgrm"
	if strings.Join(names, " ") != want {
		t.Errorf("files = %v, want %s", names, want)
	}
	b, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "Total count    =         5000") {
		t.Errorf("%s does not hold the 5000 acquires:\n%s", paths[0], b)
	}

	s := r.Ops[OpRelease]
	s.HDR = "HISTFAAAAbad"
	r.Ops[OpRelease] = s
	if _, err := ExportHGRM(dir, r); err == nil || !strings.Contains(err.Error(), "run-a op release") {
		t.Errorf("corrupt histogram export err = %v, want it to name run and op", err)
	}
	if _, err := ExportHGRM(dir, &Result{ID: "none"}); err == nil {
		t.Error("export of a run without latencies succeeded")
	}
}

func TestCSVGolden(t *testing.T) {
	r := fixture(t, "run-a", fixtureOpts{incidents: true, servers: true, series: true})
	var buf bytes.Buffer
	if err := WriteCSV(&buf, r); err != nil {
		t.Fatal(err)
	}
	golden(t, "summary.csv", buf.Bytes())
	buf.Reset()
	if err := WriteSeriesCSV(&buf, r); err != nil {
		t.Fatal(err)
	}
	golden(t, "series.csv", buf.Bytes())
}
