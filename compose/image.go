package compose

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
)

// LocalImage is the tag of the image BuildLocalImage assembles from this
// machine's own redis-server, for engines that cannot pull DefaultImage.
const LocalImage = "lockbench/redis:local"

// ImageOptions configures BuildLocalImage.
type ImageOptions struct {
	// Tag names the image; empty means LocalImage.
	Tag string
	// RedisServer is the redis-server binary to copy; empty looks it up on
	// PATH. Sentinel is the same binary (redis-server --sentinel).
	RedisServer string
	// Log, when set, receives what goes into the image and the engine's
	// build output.
	Log io.Writer
}

// ImageInfo describes a built image.
type ImageInfo struct {
	// Tag is the image's name.
	Tag string
	// ID is the engine's image id.
	ID string
	// Size is the image's size in bytes.
	Size int64
	// Files are the paths inside the image that came from this machine.
	Files []string
}

// imageFile is one file of this machine copied into the image.
type imageFile struct {
	src, dst string
}

// BuildLocalImage assembles a FROM scratch image that runs this machine's
// redis-server: the binary (also named redis-sentinel), redis-cli when it is
// on PATH (for health checks), /bin/sh (for the compose files' sentinel
// script), every shared library they link as ldd lists it, an empty /data
// (the working directory) and /tmp. The build goes through the engine's API
// with a context made in memory; nothing is pulled, so it works where no
// registry can be reached. The binaries run in the container only where
// they run here: same architecture, and a kernel new enough for this libc.
func BuildLocalImage(ctx context.Context, opts ImageOptions) (ImageInfo, error) {
	if opts.Tag == "" {
		opts.Tag = LocalImage
	}
	server := opts.RedisServer
	if server == "" {
		p, err := exec.LookPath("redis-server")
		if err != nil {
			return ImageInfo{}, ErrNoRedisServer
		}
		server = p
	}
	files, err := imageFiles(ctx, server)
	if err != nil {
		return ImageInfo{}, err
	}
	links := []imageLink{{name: "/usr/local/bin/redis-sentinel", target: "redis-server"}}
	return buildImage(ctx, opts.Tag, imageDockerfile, files, links, opts.Log,
		map[string]string{"org.lockbench.image": "redis-local", "org.lockbench.redis-server": server})
}

// imageLink is a symbolic link in the image.
type imageLink struct {
	name, target string
}

// buildImage builds a FROM scratch image from files of this machine through
// the engine's API, with a build context made in memory: nothing is pulled.
func buildImage(ctx context.Context, tag, dockerfile string, files []imageFile, links []imageLink, log io.Writer, labels map[string]string) (ImageInfo, error) {
	var buf bytes.Buffer
	if err := writeImageContext(&buf, dockerfile, files, links); err != nil {
		return ImageInfo{}, fmt.Errorf("image build context: %w", err)
	}
	if err := checkDockerEngine(ctx); err != nil {
		return ImageInfo{}, err
	}
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return ImageInfo{}, noEngine(err)
	}
	defer cli.Close()
	info := ImageInfo{Tag: tag}
	for _, f := range files {
		info.Files = append(info.Files, f.dst)
		if log != nil {
			fmt.Fprintf(log, "image: %s <- %s\n", f.dst, f.src)
		}
	}
	// The image the tag named before: once the tag moves to the new build
	// it would stay behind untagged (46 MB a build), so it is removed.
	var previous string
	if old, err := cli.ImageInspect(ctx, tag); err == nil {
		previous = old.ID
	}
	res, err := cli.ImageBuild(ctx, &buf, client.ImageBuildOptions{
		Tags:        []string{tag},
		Remove:      true,
		ForceRemove: true,
		Labels:      labels,
	})
	if err != nil {
		return info, fmt.Errorf("build image %s: %w", tag, err)
	}
	defer res.Body.Close()
	if err := readBuildOutput(res.Body, log); err != nil {
		return info, fmt.Errorf("build image %s: %w", tag, err)
	}
	img, err := cli.ImageInspect(ctx, tag)
	if err != nil {
		return info, fmt.Errorf("inspect built image %s: %w", tag, err)
	}
	info.ID, info.Size = img.ID, img.Size
	if previous != "" && previous != img.ID {
		// Not forced: an image a container still uses, or that another tag
		// names, is kept; that is the engine's call, not a failed build, and
		// the build's log says so.
		if _, err := cli.ImageRemove(ctx, previous, client.ImageRemoveOptions{PruneChildren: true}); err != nil && log != nil {
			fmt.Fprintf(log, "image: kept the image %s named before (%v)\n", previous, err)
		}
	}
	return info, nil
}

// imageFiles lists the files of this machine the image needs: the binaries
// and every library ldd names for them, each once.
func imageFiles(ctx context.Context, server string) ([]imageFile, error) {
	files := []imageFile{{src: server, dst: "/usr/local/bin/redis-server"}}
	bins := []string{server}
	if cli, err := exec.LookPath("redis-cli"); err == nil {
		files = append(files, imageFile{src: cli, dst: "/usr/local/bin/redis-cli"})
		bins = append(bins, cli)
	}
	if sh, err := exec.LookPath("sh"); err == nil {
		files = append(files, imageFile{src: sh, dst: "/bin/sh"})
		bins = append(bins, sh)
	}
	return withLibraries(ctx, files, bins)
}

// withLibraries adds to files every shared library ldd lists for bins (the
// dynamic loader included), each once; a static binary adds none.
func withLibraries(ctx context.Context, files []imageFile, bins []string) ([]imageFile, error) {
	seen := map[string]bool{}
	for _, f := range files {
		seen[f.dst] = true
	}
	for _, bin := range bins {
		lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		out, err := exec.CommandContext(lctx, "ldd", bin).CombinedOutput()
		cancel()
		if err != nil {
			if strings.Contains(string(out), "not a dynamic executable") {
				continue // static: nothing to add
			}
			return nil, fmt.Errorf("ldd %s: %w: %s", bin, err, strings.TrimSpace(string(out)))
		}
		libs, err := parseLdd(string(out))
		if err != nil {
			return nil, fmt.Errorf("ldd %s: %w", bin, err)
		}
		for _, l := range libs {
			if !seen[l] {
				seen[l] = true
				files = append(files, imageFile{src: l, dst: l})
			}
		}
	}
	return files, nil
}

// parseLdd reads ldd's output: the path of every library, the dynamic loader
// included, in order. The vDSO (no file) is left out; a library ldd could
// not find is an error, since the image would not run without it.
func parseLdd(out string) ([]string, error) {
	var libs []string
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "statically linked") {
			continue
		}
		name, path, arrow := strings.Cut(line, "=>")
		if !arrow {
			path = name
		}
		path = strings.TrimSpace(path)
		if strings.HasPrefix(path, "not found") {
			return nil, fmt.Errorf("library %s not found", strings.TrimSpace(name))
		}
		if i := strings.Index(path, " ("); i >= 0 {
			path = path[:i]
		}
		if !strings.HasPrefix(path, "/") {
			continue // linux-vdso.so.1 (0x…): in the kernel, not a file
		}
		libs = append(libs, path)
	}
	if len(libs) == 0 {
		return nil, errors.New("no libraries listed (is it a dynamic executable?)")
	}
	return libs, nil
}

// imageDockerfile copies rootfs/ into an empty image. redis-server runs
// without protected mode: the containers listen on the run's private network
// and on loopback or gateway-bound published ports only.
const imageDockerfile = `FROM scratch
COPY rootfs/ /
ENV PATH=/usr/local/bin:/bin
WORKDIR /data
EXPOSE 6379
CMD ["redis-server", "--protected-mode", "no"]
`

// writeImageContext writes the build context: the Dockerfile, and rootfs/
// with each file's content (symlinks followed) at its path in the image,
// the links, /data and /tmp.
func writeImageContext(w io.Writer, dockerfile string, files []imageFile, links []imageLink) error {
	tw := tar.NewWriter(w)
	now := time.Now()
	dirs := map[string]bool{}
	mkdir := func(dir string, mode int64) error {
		var parts []string
		for d := dir; d != "/" && d != "."; d = filepath.Dir(d) {
			parts = append(parts, d)
		}
		for i := len(parts) - 1; i >= 0; i-- {
			if dirs[parts[i]] {
				continue
			}
			dirs[parts[i]] = true
			m := int64(0o755)
			if i == 0 {
				m = mode
			}
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: "rootfs" + parts[i] + "/", Mode: m, ModTime: now}); err != nil {
				return err
			}
		}
		return nil
	}
	if err := tw.WriteHeader(&tar.Header{Name: "Dockerfile", Mode: 0o644, Size: int64(len(dockerfile)), ModTime: now}); err != nil {
		return err
	}
	if _, err := io.WriteString(tw, dockerfile); err != nil {
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: "rootfs/", Mode: 0o755, ModTime: now}); err != nil {
		return err
	}
	if err := mkdir("/data", 0o755); err != nil {
		return err
	}
	if err := mkdir("/tmp", 0o1777); err != nil {
		return err
	}
	for _, f := range files {
		b, err := os.ReadFile(f.src) // follows symlinks: the image gets the file itself
		if err != nil {
			return fmt.Errorf("read %s: %w", f.src, err)
		}
		st, err := os.Stat(f.src)
		if err != nil {
			return err
		}
		if err := mkdir(filepath.Dir(f.dst), 0o755); err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Name: "rootfs" + f.dst, Mode: int64(st.Mode().Perm()), Size: int64(len(b)), ModTime: now}); err != nil {
			return err
		}
		if _, err := tw.Write(b); err != nil {
			return err
		}
	}
	for _, l := range links {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: "rootfs" + l.name,
			Linkname: l.target, Mode: 0o777, ModTime: now}); err != nil {
			return err
		}
	}
	return tw.Close()
}

// readBuildOutput reads the engine's JSON message stream to its end,
// passing the build's lines to log, and returns the error it reports.
func readBuildOutput(r io.Reader, log io.Writer) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		var msg struct {
			Stream      string `json:"stream"`
			Error       string `json:"error"`
			ErrorDetail struct {
				Message string `json:"message"`
			} `json:"errorDetail"`
		}
		if err := json.Unmarshal(sc.Bytes(), &msg); err != nil {
			continue
		}
		if msg.Error != "" {
			return errors.New(strings.TrimSpace(msg.Error))
		}
		if msg.ErrorDetail.Message != "" {
			return errors.New(strings.TrimSpace(msg.ErrorDetail.Message))
		}
		if log != nil && strings.TrimSpace(msg.Stream) != "" {
			fmt.Fprintf(log, "build: %s\n", strings.TrimSpace(msg.Stream))
		}
	}
	return sc.Err()
}
