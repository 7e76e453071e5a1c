package compose

import (
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// swarm job's next step when the lockbench image is missing: from this
// binary where it is static, from a static build where it is not.
func TestLockbenchImageNextStep(t *testing.T) {
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go") // Go's own distribution builds it static
	if checkStatic(goTool) != nil {
		t.Skipf("%s is not a static executable here", goTool)
	}
	if got := LockbenchImageNextStep(goTool); !strings.Contains(got, "lockbench image build lockbench makes it from this lockbench") {
		t.Errorf("static binary: %q", got)
	}
	for _, dynamic := range []string{"/bin/sh", ""} {
		got := LockbenchImageNextStep(dynamic)
		for _, want := range []string{"not a static executable", "make image-lockbench", "CGO_ENABLED=0 go build"} {
			if !strings.Contains(got, want) {
				t.Errorf("binary %q: %q lacks %q", dynamic, got, want)
			}
		}
	}
}
