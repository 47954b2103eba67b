package process

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/demiurge/demiurge"
)

// ArtifactError reports which stream's artifact could not be stored. Its
// message names the kind of failure only ("stdout=ENOSPC"): OS error texts
// carry paths, and the message is shown to users and models.
type ArtifactError struct {
	Stdout, Stderr error // nil for a stream that was stored
}

func (e *ArtifactError) Error() string {
	var parts []string
	if e.Stdout != nil {
		parts = append(parts, "stdout="+errKind(e.Stdout))
	}
	if e.Stderr != nil {
		parts = append(parts, "stderr="+errKind(e.Stderr))
	}
	return strings.Join(parts, ", ")
}

// Unwrap returns the failures, for errors.Is and errors.As.
func (e *ArtifactError) Unwrap() []error {
	var out []error
	for _, err := range []error{e.Stdout, e.Stderr} {
		if err != nil {
			out = append(out, err)
		}
	}
	return out
}

// errKind names the kind of an I/O failure without its text.
func errKind(err error) string {
	switch {
	case errors.Is(err, io.ErrShortWrite):
		return "short_write"
	case errors.Is(err, errUnsafeArtifactPath):
		return "unsafe_path"
	}
	if name := errnoName(err); name != "" {
		return name
	}
	return "error"
}

// errUnsafeArtifactPath marks an artifact location that is a symbolic link,
// not a directory, or outside the artifact root.
var errUnsafeArtifactPath = errors.New("unsafe artifact path")

// artifactRoot returns the canonical artifact root, creating it (0700).
func artifactRoot(root string) (string, error) {
	if root == "" {
		return "", nil
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", demiurge.WrapError(demiurge.ECONFIG, err, "artifact root %s: %s", root, demiurge.IOReason(err))
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return "", demiurge.WrapError(demiurge.ECONFIG, err, "artifact root %s: %s", abs, demiurge.IOReason(err))
	}
	// The root itself may sit under symbolic links (a home on another
	// volume); what lies below it may not.
	canon, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", demiurge.WrapError(demiurge.ECONFIG, err, "artifact root %s: %s", abs, demiurge.IOReason(err))
	}
	fi, err := os.Stat(canon)
	if err != nil || !fi.IsDir() {
		return "", demiurge.Errorf(demiurge.ECONFIG, "artifact root %s is not a directory", abs)
	}
	return canon, nil
}

// sessionDirName is the opaque directory of one session's artifacts: the
// session id is not trusted to be a safe file name.
func sessionDirName(sessionID string) string {
	sum := sha256.Sum256([]byte(sessionID))
	return hex.EncodeToString(sum[:])[:32]
}

// artifactFile stores one stream. Writes after a failure are dropped: the
// stream keeps draining, the failure is reported once at the end.
type artifactFile struct {
	path    string
	f       *os.File
	w       io.Writer // f, or the test hook's wrapper around it
	err     error
	bytes   int64  // bytes written to the file
	small   []byte // writes gathered, not written yet (see gatherMax)
	flushed int64  // bytes handed to writeback so far
	synced  int64  // bytes a background sync was requested for so far
	bg      backgroundSync

	// limit bounds the stored stream (0: unbounded); dropped counts what
	// was not stored past it. A truncated artifact ends with a marker
	// naming both figures.
	limit, dropped int64
}

// truncationMarker ends an artifact cut at its limit.
func truncationMarker(kept, total int64) string {
	return fmt.Sprintf("\n...[artifact truncated: kept the first %d of %d bytes]\n", kept, total)
}

// writebackEvery is how much an artifact grows between two requests to
// start writing it back.
const writebackEvery = 8 << 20

// gatherMax bounds the writes an artifact gathers before it writes them:
// they go to the file ahead of the next write that would overflow it, in
// the same system call, or at the end. A drain hands over pieces as small
// as the command's own writes (a chatty command's lines; 8 KiB from
// `head`, which the pipe hands over as soon as they arrive), and a system
// call for each would cost more than the bytes: gathered, a stream of
// hundreds of MiB takes one write per quarter MiB.
const gatherMax = 256 << 10

func (a *artifactFile) Write(p []byte) {
	if a.err != nil {
		return
	}
	if stored := a.bytes + int64(len(a.small)); a.limit > 0 && stored+int64(len(p)) > a.limit {
		room := max(a.limit-stored, 0)
		a.dropped += int64(len(p)) - room
		p = p[:room]
	}
	if len(p) == 0 {
		return
	}
	if len(a.small)+len(p) <= gatherMax {
		// append grows the buffer with what is gathered: a command that
		// prints a line holds a few bytes, not gatherMax.
		a.small = append(a.small, p...)
		return
	}
	a.write(p)
}

// write writes the gathered small writes and then p.
func (a *artifactFile) write(p []byte) {
	want := len(a.small) + len(p)
	var n int
	var err error
	switch {
	case len(a.small) == 0:
		n, err = a.w.Write(p)
	case len(p) == 0:
		n, err = a.w.Write(a.small)
	case a.w == io.Writer(a.f):
		n, err = writeBoth(a.f, a.small, p)
	default: // the test hook's writer
		if n, err = a.w.Write(a.small); err == nil {
			var m int
			m, err = a.w.Write(p)
			n += m
		}
	}
	a.bytes += int64(n)
	a.small = a.small[:0]
	if err == nil && n < want {
		err = io.ErrShortWrite
	}
	if err != nil {
		a.fail(err)
		return
	}
	if a.bytes-a.flushed >= writebackEvery {
		startWriteback(a.f, a.flushed, a.bytes-a.flushed)
		a.flushed = a.bytes
	}
	if a.bytes-a.synced >= syncEvery {
		a.bg.request(a.f)
		a.synced = a.bytes
	}
}

func (a *artifactFile) fail(err error) {
	a.err = err
	_ = a.bg.stop() // the write failure is the one reported
	if a.f != nil {
		a.f.Close()
		a.f = nil
	}
}

// finish syncs and closes the file. An empty or failed file is removed:
// only complete, non-empty streams are artifacts, so neither is synced.
func (a *artifactFile) finish() {
	if a.f != nil && a.err == nil && a.dropped > 0 {
		kept := a.bytes + int64(len(a.small))
		a.limit = 0
		a.Write([]byte(truncationMarker(kept, kept+a.dropped)))
	}
	if a.f != nil && a.err == nil && len(a.small) > 0 {
		a.write(nil)
	}
	if err := a.bg.stop(); err != nil && a.err == nil {
		a.err = err
	}
	if a.f != nil {
		if a.err == nil && a.bytes > 0 {
			if err := a.f.Sync(); err != nil {
				a.err = err
			}
		}
		if err := a.f.Close(); err != nil && a.err == nil {
			a.err = err
		}
		a.f = nil
	}
	if a.err != nil || a.bytes == 0 {
		_ = os.Remove(a.path)
	}
}

// storedPath is the Stream.ArtifactPath of a finished file.
func (a *artifactFile) storedPath() string {
	if a == nil || a.err != nil || a.bytes == 0 {
		return ""
	}
	return a.path
}

// openArtifacts creates <root>/<session hash>/<spawnID>/ and the two
// stream files in it. Directories are 0700, files 0600, created
// exclusively and without following links; every directory below root is
// checked not to be a link. A failure is not fatal: it is recorded in the
// returned files, whose streams still drain.
func (m *Manager) openArtifacts(sessionID, spawnID string) (dir string, out, errf *artifactFile) {
	if m.root == "" {
		return "", nil, nil
	}
	session := filepath.Join(m.root, sessionDirName(sessionID))
	dir = filepath.Join(session, spawnID)
	out = &artifactFile{path: filepath.Join(dir, "stdout.log")}
	errf = &artifactFile{path: filepath.Join(dir, "stderr.log")}
	fail := func(err error) (string, *artifactFile, *artifactFile) {
		out.err, errf.err = err, err
		return dir, out, errf
	}
	if err := privateDir(session); err != nil {
		return fail(err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		return fail(err)
	}
	if err := privateDir(dir); err != nil {
		return fail(err)
	}
	for _, a := range []*artifactFile{out, errf} {
		if rel, err := filepath.Rel(m.root, a.path); err != nil || strings.HasPrefix(rel, "..") {
			a.err = errUnsafeArtifactPath
			continue
		}
		f, err := os.OpenFile(a.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|openNoFollow, 0o600)
		if err != nil {
			a.err = err
			continue
		}
		a.f, a.w = f, f
		if m.artifactHook != nil {
			a.w = m.artifactHook(filepath.Base(a.path), f)
		}
	}
	return dir, out, errf
}

// privateDir makes sure path is a real directory (not a link) with mode
// 0700, creating it if needed.
func privateDir(path string) error {
	if err := os.Mkdir(path, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return errUnsafeArtifactPath
	}
	if fi.Mode().Perm() != 0o700 {
		return os.Chmod(path, 0o700)
	}
	return nil
}
