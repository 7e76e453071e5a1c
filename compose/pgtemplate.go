package compose

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// A local postgres topology's initdb takes one to two seconds, more than
// its server's start; every renewal-check and scenario cell starts a fresh
// server. So the first initdb of a setup is kept, as a template, under the
// user's cache directory, and later servers copy it: the same files initdb
// would write (its system identifier aside, which only replication reads),
// owned by the same user.

// pgTemplateDir is the cache directory of the template made by initdb with
// args, run as cred (nil: this process's user), or "" when there is no
// user cache directory. The key covers what decides the files: initdb's
// path and version, its arguments, and the owner.
func pgTemplateDir(ctx context.Context, initdb string, args []string, cred *syscall.Credential) string {
	cache, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	version, err := exec.CommandContext(ctx, initdb, "--version").Output()
	if err != nil {
		return ""
	}
	owner := "euid " + strconv.Itoa(os.Geteuid())
	if cred != nil {
		owner = fmt.Sprintf("uid %d gid %d", cred.Uid, cred.Gid)
	}
	sum := sha256.Sum256([]byte(strings.Join(append([]string{initdb, strings.TrimSpace(string(version)), owner}, args...), "\x00")))
	return filepath.Join(cache, "lockbench", "pg-template-"+hex.EncodeToString(sum[:8]))
}

// pgTemplateData is the template's data directory under its cache
// directory; it is complete once it exists (templates are renamed into
// place whole).
func pgTemplateData(tmpl string) string { return filepath.Join(tmpl, "data") }

// copyPgData copies the data directory from into to (which must not
// exist), keeping modes and owners (cp -a).
func copyPgData(ctx context.Context, from, to string) error {
	if out, err := exec.CommandContext(ctx, "cp", "-a", from, to).CombinedOutput(); err != nil {
		_ = os.RemoveAll(to)
		return fmt.Errorf("cp -a %s %s: %w; %s", from, to, err, tail(out))
	}
	return nil
}

// fromPgTemplate copies the cached template into data, reporting false
// when there is none (or it could not be copied: initdb then runs).
func fromPgTemplate(ctx context.Context, tmpl, data string) bool {
	if tmpl == "" {
		return false
	}
	if _, err := os.Stat(filepath.Join(pgTemplateData(tmpl), "PG_VERSION")); err != nil {
		return false
	}
	return copyPgData(ctx, pgTemplateData(tmpl), data) == nil
}

// savePgTemplate caches data, fresh from initdb and never started, as the
// template tmpl: copied into a directory of its own beside it, then
// renamed into place, so that a reader sees a whole template or none. Of
// two processes saving at once, the first rename wins and the other's copy
// is removed. The error only says why nothing was cached; the server is
// unaffected.
func savePgTemplate(ctx context.Context, tmpl, data string) error {
	if tmpl == "" {
		return errors.New("no user cache directory")
	}
	parent := filepath.Dir(tmpl)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	removeStaleCopies(parent, filepath.Base(tmpl)+".tmp-", staleTemplateCopy, time.Now())
	tmp, err := os.MkdirTemp(parent, filepath.Base(tmpl)+".tmp-")
	if err != nil {
		return err
	}
	if err := copyPgData(ctx, data, pgTemplateData(tmp)); err != nil {
		_ = os.RemoveAll(tmp)
		return err
	}
	if err := os.Rename(tmp, tmpl); err != nil {
		_ = os.RemoveAll(tmp)
		if _, statErr := os.Stat(pgTemplateData(tmpl)); statErr == nil || !errors.Is(statErr, fs.ErrNotExist) {
			return nil // another process cached it first
		}
		return err
	}
	return nil
}

// staleTemplateCopy is how old a template copy in progress must be before
// a later save takes it for one left by a process killed while copying: a
// copy takes about a second, so ten minutes never catches a live one.
const staleTemplateCopy = 10 * time.Minute

// removeStaleCopies removes the directories in parent named prefix…
// (template copies in progress) last modified more than age before now:
// each is a data directory's worth of disk that nothing else would free.
// Failures are ignored: the next save tries again.
func removeStaleCopies(parent, prefix string, age time.Duration, now time.Time) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		if info, err := e.Info(); err == nil && now.Sub(info.ModTime()) > age {
			_ = os.RemoveAll(filepath.Join(parent, e.Name()))
		}
	}
}
