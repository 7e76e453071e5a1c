package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// FileName is the name a result is stored under in its directory.
func FileName(id string) string { return id + ".json" }

// Write stores r in dir atomically (temp file, then rename), so an interrupted
// run never leaves half a file; it returns the file's path.
func Write(dir string, r *Result) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("results dir %s: %w", dir, err)
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return "", fmt.Errorf("encode result %s: %w", r.ID, err)
	}
	path := filepath.Join(dir, FileName(r.ID))
	return path, writeAtomic(path, append(b, '\n'))
}

func writeAtomic(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	// CreateTemp makes files private; results are meant to be shared and read.
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("chmod %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("sync %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("close %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("rename into %s: %w", path, err)
	}
	return nil
}

// Read loads and validates one result file. Errors name the file.
func Read(path string) (*Result, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read result %s: %w", path, err)
	}
	return Decode(path, b)
}

// Decode parses a result from b; name is used in errors. It tells apart
// broken JSON, JSON that is not a lockbench result, a result of another
// schema version and a malformed result, since each calls for a different fix.
func Decode(name string, b []byte) (*Result, error) {
	if !json.Valid(b) {
		var probe any
		err := json.Unmarshal(b, &probe)
		return nil, fmt.Errorf("%s: not a lockbench result (invalid or truncated JSON: %w)", name, err)
	}
	var head map[string]json.RawMessage
	if err := json.Unmarshal(b, &head); err != nil || head == nil {
		return nil, fmt.Errorf("%s: not a lockbench result (not a JSON object)", name)
	}
	raw, ok := head["schema"]
	if !ok {
		return nil, fmt.Errorf("%s: not a lockbench result (no \"schema\" field)", name)
	}
	var schema string
	if err := json.Unmarshal(raw, &schema); err != nil {
		return nil, fmt.Errorf("%s: not a lockbench result (\"schema\" is not a string: %s)", name, raw)
	}
	if schema != Schema {
		return nil, fmt.Errorf("%s: unknown schema %q; this lockbench reads %q", name, schema, Schema)
	}
	var r Result
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: malformed %s result: %w", name, Schema, err)
	}
	if r.ID == "" {
		return nil, fmt.Errorf("%s: result has no id", name)
	}
	return &r, nil
}

// List reads every result in dir, newest first. Files that are not results are
// reported in skipped rather than failing the listing.
func List(dir string) (rs []*Result, skipped []error, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("results dir %s: %w", dir, err)
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		r, err := Read(path)
		if err != nil {
			skipped = append(skipped, &BrokenFile{Path: path, Err: err})
			continue
		}
		rs = append(rs, r)
	}
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].StartedAt.After(rs[j].StartedAt) })
	return rs, skipped, nil
}

// BrokenFile is a .json file in a results directory that is not a result
// lockbench can read (truncated, another tool's JSON, another schema).
type BrokenFile struct {
	Path string
	Err  error
}

// Error says what is wrong with the file; it names the file.
func (b *BrokenFile) Error() string { return b.Err.Error() }

// Unwrap is the read or decode error.
func (b *BrokenFile) Unwrap() error { return b.Err }

// Find resolves a reference to exactly one run: a path to a file, an id,
// or a unique prefix or suffix of one (see FindRuns).
func Find(dir, ref string) (*Result, error) {
	rs, err := FindRuns(dir, ref)
	if err != nil {
		return nil, err
	}
	if len(rs) != 1 {
		return nil, fmt.Errorf("run %q is a group of %d runs; name one of them", ref, len(rs))
	}
	return rs[0], nil
}

// Generators returns every generator's result of run id in dir (the files
// <id>-g<i>.json), by generator index.
func Generators(dir, id string) ([]*Result, error) {
	paths, err := filepath.Glob(filepath.Join(dir, id+"-g*.json"))
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", id, err)
	}
	var out []*Result
	for _, p := range paths {
		if _, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), id+"-g"), ".json")); err != nil {
			continue
		}
		r, err := Read(p)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("run %s: no generator results (%s-g<i>.json) in %s", id, id, dir)
	}
	return out, nil
}

var errAmbiguous = errors.New("ambiguous id")

// ErrNoResults is wrapped by lookups in a directory that holds no result
// files, so a command can tell "nothing recorded yet" from "no such run".
var ErrNoResults = errors.New("no lockbench results")

// WriteFileAtomic writes b to path through a temp file and a rename, so a
// reader never sees half a file.
func WriteFileAtomic(path string, b []byte) error { return writeAtomic(path, b) }
