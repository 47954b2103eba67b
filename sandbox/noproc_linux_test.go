package sandbox

import (
	"bytes"
	"errors"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// forkAttempts tries every way a Python program has to start a process,
// around any interpreter-level hook: os.fork, the C library's fork through
// ctypes, the raw fork and clone system calls, subprocess (which forks in
// C, in _posixsubprocess) and posix_spawn; a thread must still start.
const forkAttempts = `
import ctypes, errno, os, subprocess, sys, threading
libc = ctypes.CDLL(None, use_errno=True)
out = []
def report(name, pid_or_err):
    if isinstance(pid_or_err, int) and pid_or_err > 0:
        os.waitpid(pid_or_err, 0)
        out.append(name + ":forked")
    elif isinstance(pid_or_err, int):
        out.append(name + ":" + errno.errorcode.get(ctypes.get_errno(), "?"))
    else:
        out.append(name + ":" + errno.errorcode.get(pid_or_err.errno, "?"))
def child():
    os._exit(0)
try:
    pid = os.fork()
    if pid == 0: child()
    report("os.fork", pid)
except OSError as e:
    report("os.fork", e)
pid = libc.fork()
if pid == 0: child()
report("libc.fork", pid)
if os.uname().machine == "x86_64":
    pid = libc.syscall(57)  # fork
    if pid == 0: child()
    report("sys.fork", pid)
    pid = libc.syscall(56, 17, 0, 0, 0, 0)  # clone(SIGCHLD): a fork
    if pid == 0: child()
    report("sys.clone", pid)
try:
    subprocess.run(["/bin/true"], check=True)
    out.append("subprocess:forked")
except OSError as e:
    report("subprocess", e)
try:
    pid = os.posix_spawn("/bin/true", ["true"], {})
    report("posix_spawn", pid)
except OSError as e:
    report("posix_spawn", e)
for i in range(64):
    try:
        pid = os.fork()
    except OSError:
        out.append("bomb:stopped@%d" % i)
        break
    if pid == 0:
        child()
    os.waitpid(pid, 0)
else:
    out.append("bomb:64")
t = threading.Thread(target=lambda: out.append("thread:ran"))
t.start(); t.join()
print(" ".join(out))
`

// runPython runs a Python program inside the sandbox, without a shell.
func runPython(t *testing.T, p Policy, dir, src string) ran {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found")
	}
	if r, err := filepath.EvalSymlinks("/usr/bin/python3"); err == nil {
		py = r // not a version manager's shim, which would exec another
	}
	var out, errb bytes.Buffer
	cmd := &exec.Cmd{
		Path: py, Args: []string{"python3", "-I", "-c", src}, Dir: dir,
		Env:    []string{"PATH=/usr/local/bin:/usr/bin:/bin"},
		Stdout: &out, Stderr: &errb,
		SysProcAttr: &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL},
	}
	l, err := Wrap(cmd, p)
	if err != nil {
		t.Fatalf("Wrap: %v", err)
	}
	if err := cmd.Start(); err != nil {
		l.Abort()
		t.Fatalf("start: %v", err)
	}
	if err := l.Started(); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("Started: %v", err)
	}
	_ = cmd.Wait()
	r := ran{stdout: out.String(), stderr: errb.String(), code: cmd.ProcessState.ExitCode()}
	r.signal, r.limit = l.Exit(cmd.ProcessState.Sys().(syscall.WaitStatus))
	return r
}

// TestNoProcessesRefusesEveryFork: under Policy.NoProcesses the kernel
// refuses each way to create a process, even for a Host running as root
// (where RLIMIT_NPROC binds nothing), while threads still start; the same
// program without it forks, and so do ordinary sandboxed commands.
func TestNoProcessesRefusesEveryFork(t *testing.T) {
	if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		t.Skip("the process filter is written for amd64 and arm64")
	}
	f := newFixture(t)
	p := f.profile().Policy(f.workspace, f.private)
	p.NoProcesses = true
	r := runPython(t, p, f.workspace, forkAttempts)
	want := "os.fork:EPERM libc.fork:EPERM subprocess:EPERM posix_spawn:EPERM bomb:stopped@0 thread:ran"
	if runtime.GOARCH == "amd64" {
		want = "os.fork:EPERM libc.fork:EPERM sys.fork:EPERM sys.clone:EPERM subprocess:EPERM posix_spawn:EPERM bomb:stopped@0 thread:ran"
	}
	if got := strings.TrimSpace(r.stdout); got != want || r.code != 0 {
		t.Fatalf("under the filter: %q (exit %d, stderr %q), want %q", got, r.code, r.stderr, want)
	}

	p.NoProcesses = false
	r = runPython(t, p, f.workspace, forkAttempts)
	if got := r.stdout; !strings.Contains(got, "os.fork:forked") || !strings.Contains(got, "subprocess:forked") || !strings.Contains(got, "bomb:64") {
		t.Fatalf("without the filter: %q (stderr %q)", got, r.stderr)
	}
	if r := run(t, p, f.workspace, "echo $(echo a | tr a b) & wait"); r.stdout != "b\n" {
		t.Fatalf("a sandboxed shell could not fork: %+v", r)
	}
}

// The filter refuses ptrace too: a filtered process cannot make another
// process of the sandbox (the helper, its parent) fork for it.
func TestNoProcessesRefusesPtrace(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the ptrace number below is amd64's")
	}
	f := newFixture(t)
	p := f.profile().Policy(f.workspace, f.private)
	p.NoProcesses = true
	r := runPython(t, p, f.workspace, `
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
rc = libc.syscall(101, 0x4206, os.getppid(), 0, 0)  # ptrace(PTRACE_SEIZE, parent): no stop
print(rc, errno.errorcode.get(ctypes.get_errno(), "?"))
`)
	if got := strings.TrimSpace(r.stdout); got != "-1 EPERM" {
		t.Fatalf("ptrace of the helper: %q (stderr %q)", got, r.stderr)
	}
}

// Under the filter, a command that cannot be executed fails the start with
// the reason, as without it: the helper reports it after "exec".
func TestNoProcessesStartFailure(t *testing.T) {
	if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		t.Skip("the process filter is written for amd64 and arm64")
	}
	f := newFixture(t)
	p := f.profile().Policy(f.workspace)
	p.NoProcesses = true
	cmd := &exec.Cmd{Path: filepath.Join(f.workspace, "missing"), Args: []string{"missing"}, Dir: f.workspace}
	l, err := Wrap(cmd, p)
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	err = l.Started()
	_ = cmd.Wait()
	l.Release()
	var se *StartError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "no such file") {
		t.Fatalf("Started for a missing executable: %v", err)
	}
}

// Under the filter the command replaces the helper: it is the namespace's
// PID 1, its exit status is the command's own, and a signal that ends it
// is reported as it is without the filter.
func TestNoProcessesCommandIsPID1(t *testing.T) {
	if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		t.Skip("the process filter is written for amd64 and arm64")
	}
	f := newFixture(t)
	p := f.profile().Policy(f.workspace, f.private)
	p.NoProcesses = true
	r := runPython(t, p, f.workspace, "import os, sys\nprint(os.getpid(), os.getcwd())\nsys.exit(7)")
	if got, want := strings.TrimSpace(r.stdout), "1 "+f.workspace; got != want || r.code != 7 || r.signal != 0 {
		t.Fatalf("stdout %q exit %d signal %v (stderr %q), want %q and exit 7", got, r.code, r.signal, r.stderr, want)
	}
	// A PID 1 ignores a signal it has no handler for, unless the kernel
	// forces it: SIGKILL from outside, SIGSEGV of its own fault.
	r = runPython(t, p, f.workspace, "import ctypes\nctypes.string_at(0)")
	if r.signal != syscall.SIGSEGV {
		t.Fatalf("a crash: signal %v exit %d (stderr %q), want SIGSEGV", r.signal, r.code, r.stderr)
	}
}
