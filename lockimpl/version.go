package lockimpl

import "runtime/debug"

// ModuleVersion is the version of module path as linked into this binary,
// read from its build information, so a result names the library version
// that actually ran. A binary without module information (a test binary)
// says "unknown".
func ModuleVersion(path string) string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	return moduleVersionIn(info, path)
}

// moduleVersionIn finds path among info's dependencies; a replaced module
// reports its replacement's version (or path, for a local directory).
func moduleVersionIn(info *debug.BuildInfo, path string) string {
	for _, d := range info.Deps {
		if d.Path != path {
			continue
		}
		if r := d.Replace; r != nil {
			if r.Version != "" {
				return r.Version + " (replaced by " + r.Path + ")"
			}
			return "replaced by " + r.Path
		}
		return d.Version
	}
	return "unknown"
}
