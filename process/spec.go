package process

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/sandbox"
)

// DefaultTailChars is the number of characters each stream's tail keeps
// when Spec.TailChars is zero or negative.
const DefaultTailChars = 12000

// TreeEnv is the variable the Manager adds to every command's environment,
// holding the spawn id. It is how descendants that left the command's
// session and were orphaned (a double fork, setsid, daemon(3)) are still
// recognised as part of its tree. Any value the caller put under this name
// is replaced.
const TreeEnv = "DEMIURGE_PROCESS_TREE"

// Spec describes one command.
type Spec struct {
	// Argv is the command line, e.g. {"/bin/bash", "-c", cmd}. Argv[0] is
	// resolved against the PATH in Env (not the Host's PATH) unless it
	// contains a slash; a relative path is taken relative to Dir.
	Argv []string
	// Dir is the working directory; empty means the Host's.
	Dir string
	// Env is the complete environment: nothing is inherited from the Host.
	// The Manager adds only TreeEnv.
	Env []string
	// Timeout bounds the command; 0 means none (the context of Run still
	// applies).
	Timeout time.Duration
	// SessionID names the artifact directory:
	// <ArtifactRoot>/<hex sha256(SessionID)[:32]>/<spawn id>/{stdout,stderr}.log.
	SessionID string
	// Redact maps exact values to markers. The replacement is applied to
	// the output before it reaches a tail, an artifact or OnChunk, across
	// read boundaries.
	Redact map[string]string
	// Discover, when set, finds secrets in the output itself (it returns
	// value → marker pairs); each is redacted from the line it was found
	// in on, together with Redact's values. See discoveringRedactor.
	Discover func(text string) map[string]string
	// ArtifactLimit bounds each stream's artifact in bytes (0: unbounded).
	// The bytes past it are counted but not stored; the artifact then ends
	// with a truncation marker naming the bytes kept and the total.
	ArtifactLimit int64
	// TailChars is how many characters of each stream the Result keeps;
	// DefaultTailChars when zero or negative.
	TailChars int
	// OnChunk, when set, receives each redacted chunk of output as text
	// (valid UTF-8, split only at character boundaries), stream "stdout"
	// or "stderr", from the goroutine draining that stream. It must not
	// block long: the command stalls on a full pipe while it runs.
	OnChunk func(stream string, text string)
	// Sandbox, when set, runs the command and its whole tree inside the
	// OS sandbox with this policy (see package sandbox). A sandbox that
	// cannot be built fails the start (EUNAVAILABLE) and nothing runs.
	Sandbox *sandbox.Policy
}

// Stream is what a command wrote to one of its streams, after redaction.
type Stream struct {
	// Tail holds the last TailChars characters. Invalid UTF-8 is replaced
	// byte by byte with U+FFFD.
	Tail string
	// TotalBytes and TotalChars count the whole (redacted) stream;
	// TotalBytes equals the size of the artifact unless it was truncated.
	TotalBytes, TotalChars int64
	// ArtifactTruncated reports that the artifact holds only the first
	// Spec.ArtifactLimit bytes of the stream, then the truncation marker.
	ArtifactTruncated bool
	// Truncated reports whether Tail holds less than the whole stream.
	Truncated bool
	// ArtifactPath is the file holding the whole stream, set only when the
	// stream was not empty and its artifact was written, flushed and
	// synced completely.
	ArtifactPath string
}

// Result is the outcome of one command.
type Result struct {
	SpawnID     string
	PID         int
	StartMarker string
	// ExitCode is the command's exit status, or 128+signal when a signal
	// ended it (Signal then names it, e.g. "SIGKILL"). A timed-out or
	// cancelled command reports what the signal did; callers that want a
	// conventional code (124) map TimedOut themselves.
	ExitCode int
	Signal   string
	// Limit names the sandbox resource limit whose signal ended the
	// command (e.g. "file size limit (8192 MiB)"), "" for none.
	Limit string
	// TimedOut reports that Spec.Timeout passed; Cancelled that Cancel,
	// the context of Run or Manager.Close ended the command.
	TimedOut, Cancelled bool
	// Duration runs from the start until the command's tree was gone and
	// its output drained.
	Duration       time.Duration
	Stdout, Stderr Stream
	// ArtifactErr, when not nil, is an *ArtifactError: an artifact could
	// not be created, written, flushed or synced. The output was still
	// drained to the end, but the stored copy is incomplete, so callers
	// treat the command as failed.
	ArtifactErr error
	// Resolved is the absolute path of the executable that ran.
	Resolved string
}

// normalize checks spec and fills defaults. It returns a copy.
func (s Spec) normalize() (Spec, error) {
	if err := checkCommand(s.Argv, s.Env); err != nil {
		return s, err
	}
	if s.Timeout < 0 {
		return s, demiurge.Errorf(demiurge.EINVALID, "process spec: negative timeout %s", s.Timeout)
	}
	if s.TailChars <= 0 {
		s.TailChars = DefaultTailChars
	}
	s.Argv = append([]string(nil), s.Argv...)
	return s, nil
}

// checkCommand checks a command line and its environment: what exec(2)
// could not pass on is refused before anything starts.
func checkCommand(argv, env []string) error {
	if len(argv) == 0 || argv[0] == "" {
		return demiurge.Errorf(demiurge.EINVALID, "process spec: argv is empty")
	}
	for i, a := range argv {
		if strings.IndexByte(a, 0) >= 0 {
			return demiurge.Errorf(demiurge.EINVALID, "process spec: argv[%d] contains a NUL byte", i)
		}
	}
	for i, e := range env {
		if strings.IndexByte(e, 0) >= 0 || !strings.Contains(e, "=") {
			return demiurge.Errorf(demiurge.EINVALID, "process spec: env[%d] is not NAME=value without NUL bytes", i)
		}
	}
	return nil
}

// resolve checks the working directory and finds the executable.
func resolve(argv0, dir string, env []string) (string, error) {
	if dir != "" {
		// fork/exec reports a bad directory as if the executable were missing.
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			if err == nil {
				err = syscall.ENOTDIR
			}
			return "", demiurge.WrapError(demiurge.ENOTFOUND, err, "working directory %s: %s", dir, reason(err))
		}
	}
	return lookPath(argv0, dir, env)
}

// envWithTree returns env without any TreeEnv entry, plus TreeEnv=spawnID.
func envWithTree(env []string, spawnID string) []string {
	out := make([]string, 0, len(env)+1)
	for _, e := range env {
		if !strings.HasPrefix(e, TreeEnv+"=") {
			out = append(out, e)
		}
	}
	return append(out, TreeEnv+"="+spawnID)
}

// envValue returns the last value of name in env, as the child would see it.
func envValue(env []string, name string) string {
	v := ""
	for _, e := range env {
		if k, val, ok := strings.Cut(e, "="); ok && k == name {
			v = val
		}
	}
	return v
}

// lookPath resolves argv0 the way a shell would, but against the PATH of
// the command's own environment. Relative PATH entries (including the
// empty one, meaning ".") are skipped: they would make the executable
// depend on the working directory, which the command's author may control.
func lookPath(argv0, dir string, env []string) (string, error) {
	if strings.ContainsRune(argv0, '/') || strings.ContainsRune(argv0, filepath.Separator) {
		p := argv0
		if !filepath.IsAbs(p) {
			base := dir
			if base == "" {
				wd, err := os.Getwd()
				if err != nil {
					return "", demiurge.WrapError(demiurge.EINTERNAL, err, "resolve %s: working directory unknown", argv0)
				}
				base = wd
			}
			p = filepath.Join(base, p)
		}
		if err := checkExecutable(p); os.IsNotExist(err) {
			return "", demiurge.WrapError(demiurge.ENOTFOUND, err, "executable %s not found", argv0)
		} else if err != nil {
			return "", demiurge.WrapError(demiurge.ENOTFOUND, err, "executable %s: %s", argv0, reason(err))
		}
		return filepath.Clean(p), nil
	}
	for _, d := range filepath.SplitList(envValue(env, "PATH")) {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		for _, p := range candidates(filepath.Join(d, argv0), env) {
			if checkExecutable(p) == nil {
				return p, nil
			}
		}
	}
	return "", demiurge.Errorf(demiurge.ENOTFOUND, "executable %s not found in the command's PATH", argv0)
}

// reason renders an OS error without the path it carries.
func reason(err error) string {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err.Error()
	}
	return err.Error()
}
