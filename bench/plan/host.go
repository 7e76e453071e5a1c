package plan

import (
	"os"
	"runtime"
	"runtime/debug"

	"github.com/lockbench/lockbench/results"
)

// ThisHost describes the machine and build running this generator.
func ThisHost() results.Host {
	name, err := os.Hostname()
	if err != nil {
		name = "unknown"
	}
	return results.Host{
		Name: name, CPUs: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0),
		OS: runtime.GOOS, Arch: runtime.GOARCH, GoVersion: runtime.Version(), Build: BuildVersion(),
	}
}

// BuildVersion is the module version of a released build, else the VCS
// revision it was built from, marked when the tree had local changes.
func BuildVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if rev == "" {
		return "devel"
	}
	return rev[:min(12, len(rev))] + dirty
}
