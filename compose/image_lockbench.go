package compose

import (
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
)

// LockbenchImage is the tag of the image BuildLockbenchImage makes: lockbench
// itself, for generators run by an engine on this machine (lockbench swarm
// job) without a registry.
const LockbenchImage = "lockbench/lockbench:local"

// caBundle is copied into the lockbench image where this machine has it, so
// that generators can verify rediss:// servers.
const caBundle = "/etc/ssl/certs/ca-certificates.crt"

// ErrNotStatic is wrapped by BuildLockbenchImage's error when the binary
// needs shared libraries, which a FROM scratch image does not have.
var ErrNotStatic = errors.New("not a static executable")

// LockbenchImageOptions configures BuildLockbenchImage.
type LockbenchImageOptions struct {
	// Tag names the image; empty means LockbenchImage.
	Tag string
	// Binary is the lockbench to copy; empty means the running one.
	Binary string
	// Log, when set, receives what goes into the image and the engine's
	// build output.
	Log io.Writer
}

// lockbenchDockerfile runs lockbench as nobody; results go to /tmp (the
// generators print theirs to the log, where they are collected).
const lockbenchDockerfile = `FROM scratch
COPY rootfs/ /
ENV PATH=/usr/local/bin
WORKDIR /tmp
USER 65534:65534
EXPOSE 9464
ENTRYPOINT ["lockbench"]
CMD ["help"]
`

// BuildLockbenchImage assembles a FROM scratch image of a static lockbench
// build (CGO_ENABLED=0), with this machine's CA bundle where there is one,
// through the engine's API and without pulling anything, as BuildLocalImage
// does for redis-server. A binary that links shared libraries is refused
// (ErrNotStatic): it would not start in the image.
func BuildLockbenchImage(ctx context.Context, opts LockbenchImageOptions) (ImageInfo, error) {
	if opts.Tag == "" {
		opts.Tag = LockbenchImage
	}
	bin, err := staticLockbench(opts.Binary)
	if err != nil {
		return ImageInfo{}, err
	}
	files := []imageFile{{src: bin, dst: "/usr/local/bin/lockbench"}}
	if st, err := os.Stat(caBundle); err == nil && st.Mode().IsRegular() {
		files = append(files, imageFile{src: caBundle, dst: caBundle})
	}
	return buildImage(ctx, opts.Tag, lockbenchDockerfile, files, nil, opts.Log,
		map[string]string{"org.lockbench.image": "lockbench-local"})
}

// checkStatic refuses a binary that is not an ELF executable without a
// dynamic loader.
func checkStatic(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("%s: %w: %v", path, ErrNotStatic, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s: %w (it needs a dynamic loader and shared libraries, which a FROM scratch image has none of); "+
				"build one with CGO_ENABLED=0 go build -o lockbench-static ./cmd/lockbench and give it with --binary, or run make image-lockbench", path, ErrNotStatic)
		}
	}
	return nil
}

// LockbenchImageNextStep says how to make LockbenchImage on this machine,
// for a command that needs it and found it missing: from binary (this
// lockbench, os.Executable) where it is static; otherwise (go install and
// go build link with cgo wherever a C compiler is) from a static build,
// which `make image-lockbench` makes.
func LockbenchImageNextStep(binary string) string {
	if checkStatic(binary) == nil {
		return "lockbench image build lockbench makes it from this lockbench"
	}
	return "this lockbench is not a static executable, so make image-lockbench makes it from a static build " +
		"(or CGO_ENABLED=0 go build -o lockbench-static ./cmd/lockbench, then lockbench-static image build lockbench)"
}

// staticLockbench is the lockbench binary an image carries: bin, or this
// process's own when bin is "", refused unless static (ErrNotStatic), since
// a FROM scratch image has no loader or libraries for it.
func staticLockbench(bin string) (string, error) {
	if bin == "" {
		self, err := os.Executable()
		if err != nil {
			return "", fmt.Errorf("find this lockbench binary: %w", err)
		}
		bin = self
	}
	if err := checkStatic(bin); err != nil {
		return "", err
	}
	return bin, nil
}
