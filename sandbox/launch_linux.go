package sandbox

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// helperArg is the sentinel argument that makes the Host binary act as the
// sandbox helper (see init in helper_linux.go).
const helperArg = "__demiurge_sandbox_helper__"

// readyTimeout bounds the helper's setup: namespaces, mounts, Landlock and
// the command's exec take milliseconds.
const readyTimeout = 10 * time.Second

// helperConfig is what the helper reads from file descriptor 3.
type helperConfig struct {
	Path     string    `json:"path"`
	Argv     []string  `json:"argv"`
	Env      []string  `json:"env"`
	Dir      string    `json:"dir"`
	Ops      []mountOp `json:"ops"`
	Network  bool      `json:"network"`
	Limits   Limits    `json:"limits"`
	Simulate string    `json:"simulate,omitempty"`
	// NoProcesses runs the command under the process filter.
	NoProcesses bool `json:"no_processes,omitempty"`
}

// privateShm is the shared-memory directory each sandbox gets a fresh,
// writable tmpfs of (Python's multiprocessing needs one).
const privateShm = "/dev/shm"

// bound are the writable directories the plan binds back.
func (c helperConfig) bound() []string {
	var out []string
	for _, op := range c.Ops {
		if op.Kind == "bind" {
			out = append(out, op.Path)
		}
	}
	return out
}

// Launch is one sandboxed start prepared by Wrap.
type Launch struct {
	cfg     helperConfig
	cfgR    *os.File // the helper's end of the configuration pipe
	cfgW    *os.File
	status  *os.File // the Host's end of the status pipe
	statusW *os.File
	lines   *bufio.Reader
	exit    string // the helper's last report, once read
}

// Wrap rewrites cmd, not yet started, to run inside the sandbox described
// by p: cmd.Path, Args, Env and Dir describe the real command and are
// moved into the helper's configuration. cmd.SysProcAttr keeps its Setsid
// and Pdeathsig and gains the namespaces. After cmd.Start the caller must
// call Started; if Start fails it must call Abort.
func Wrap(cmd *exec.Cmd, p Policy) (*Launch, error) {
	if missing := missingFeature(p.simulateMissing); missing != "" {
		return nil, Unavailable(missing)
	}
	ops, err := p.plan()
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	l := &Launch{cfg: helperConfig{
		Path: cmd.Path, Argv: cmd.Args, Env: cmd.Env, Dir: cmd.Dir,
		Ops: ops, Network: p.Network, Limits: DefaultLimits,
		Simulate: p.simulateMissing, NoProcesses: p.NoProcesses,
	}}
	if l.cfgR, l.cfgW, err = os.Pipe(); err != nil {
		return nil, fmt.Errorf("sandbox: pipe: %w", err)
	}
	if l.status, l.statusW, err = os.Pipe(); err != nil {
		l.cfgR.Close()
		l.cfgW.Close()
		return nil, fmt.Errorf("sandbox: pipe: %w", err)
	}
	attr := cmd.SysProcAttr
	if attr == nil {
		attr = &syscall.SysProcAttr{}
	}
	attr.Cloneflags |= syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID | syscall.CLONE_NEWNS
	if !p.Network {
		attr.Cloneflags |= syscall.CLONE_NEWNET
	}
	// Inside, the helper is root of its own user namespace (it needs that
	// to mount); outside it is the Host's user, nothing more.
	attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}}
	attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}
	attr.GidMappingsEnableSetgroups = false
	cmd.SysProcAttr = attr
	cmd.Path = "/proc/self/exe"
	cmd.Args = []string{"demiurge-sandbox", helperArg}
	cmd.Dir = "/"
	// The helper's own environment is the command's: it is what a reader
	// of /proc/1/environ inside the sandbox would find.
	cmd.ExtraFiles = []*os.File{l.cfgR, l.statusW}
	return l, nil
}

// Abort releases a Launch whose command did not start.
func (l *Launch) Abort() {
	for _, f := range []*os.File{l.cfgR, l.cfgW, l.status, l.statusW} {
		if f != nil {
			f.Close()
		}
	}
}

// Started hands the helper its configuration and waits until the command
// runs inside the sandbox or the sandbox failed; the error then says why,
// and the helper exits without running the command. The caller kills and
// reaps the helper on error.
func (l *Launch) Started() error {
	l.cfgR.Close()
	l.statusW.Close()
	l.cfgR, l.statusW = nil, nil
	go func(w *os.File, cfg helperConfig) {
		// A helper that died early makes this write fail; Started reports
		// that from the status pipe.
		_ = json.NewEncoder(w).Encode(cfg)
		w.Close()
	}(l.cfgW, l.cfg)
	l.cfgW = nil
	_ = l.status.SetReadDeadline(time.Now().Add(readyTimeout))
	l.lines = bufio.NewReader(l.status)
	line, err := l.lines.ReadString('\n')
	line = strings.TrimSpace(line)
	if line == "exec" {
		// The helper is becoming the command (Policy.NoProcesses): the
		// pipe closes empty at the exec, or carries why it failed.
		if line, err = l.lines.ReadString('\n'); errors.Is(err, io.EOF) && line == "" {
			l.Release()
			return nil
		}
		line = strings.TrimSpace(line)
	}
	_ = l.status.SetReadDeadline(time.Time{})
	switch {
	case line == "ready":
		return nil
	case strings.HasPrefix(line, "error "):
		return &StartError{Reason: strings.TrimPrefix(line, "error ")}
	case errors.Is(err, os.ErrDeadlineExceeded):
		return &StartError{Reason: "the sandbox helper did not start within " + readyTimeout.String()}
	default:
		return &StartError{Reason: "the sandbox helper exited before the command started"}
	}
}

// Release drops the Host's end of the status pipe without waiting for the
// helper's last report, for callers that learn the exit another way.
func (l *Launch) Release() {
	if l.status != nil {
		l.status.Close()
		l.status = nil
	}
}

// Exit reads the helper's report of how the command ended, after the
// helper exited with ws: the signal that killed the command ("" when it
// exited), and the resource limit that signal means ("" for none). A
// command that replaced the helper (Policy.NoProcesses) reports nothing:
// its own wait status says it.
func (l *Launch) Exit(ws syscall.WaitStatus) (signal syscall.Signal, limit string) {
	if l.lines != nil && l.status != nil {
		line, _ := l.lines.ReadString('\n')
		l.exit = strings.TrimSpace(line)
	}
	l.Release()
	if n, ok := strings.CutPrefix(l.exit, "signal "); ok {
		if v, err := strconv.Atoi(n); err == nil {
			signal = syscall.Signal(v)
		}
	} else if ws.Signaled() {
		signal = ws.Signal()
	}
	switch signal {
	case unix.SIGXCPU:
		limit = "cpu time limit (" + strconv.FormatUint(l.cfg.Limits.CPUSeconds, 10) + " s)"
	case unix.SIGXFSZ:
		limit = "file size limit (" + strconv.FormatUint(l.cfg.Limits.FileBytes>>20, 10) + " MiB)"
	}
	return signal, limit
}
