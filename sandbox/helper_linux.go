package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// The helper runs before main: a Host binary started with the sentinel
// argument is the sandbox's PID 1 and never becomes the Host. This package
// imports only the standard library, x/sys and go-landlock, so the helper
// starts before the heavier packages of the binary initialise.
func init() {
	if len(os.Args) == 2 && os.Args[1] == helperArg {
		os.Exit(helperMain())
	}
}

// Exit codes of a helper that did not run the command.
const (
	exitSetup  = 125 // the sandbox could not be built
	exitSignal = 128 // + signal number, for a command killed by a signal
)

func helperMain() int {
	// Mounts, Landlock, no_new_privs and the capability bounding set are
	// set on this thread, and the command is forked from it, so the
	// command inherits all of them.
	runtime.LockOSThread()
	syscall.CloseOnExec(3)
	syscall.CloseOnExec(4)
	status := os.NewFile(4, "sandbox-status")
	fail := func(format string, args ...any) int {
		msg := strings.ReplaceAll(fmt.Sprintf(format, args...), "\n", " ")
		fmt.Fprintf(status, "error %s\n", msg)
		return exitSetup
	}
	var cfg helperConfig
	cfgFile := os.NewFile(3, "sandbox-config")
	err := json.NewDecoder(cfgFile).Decode(&cfg)
	cfgFile.Close()
	if err != nil {
		return fail("reading the sandbox configuration: %v", err)
	}
	if cfg.Simulate != "" {
		return fail("%s", Unavailable(cfg.Simulate).Error())
	}
	if err := setupMounts(cfg); err != nil {
		return fail("%v", err)
	}
	if err := setLimits(cfg.Limits); err != nil {
		return fail("resource limits: %v", err)
	}
	if err := confine(cfg); err != nil {
		return fail("%v", err)
	}
	if cfg.Path == "" {
		// A probe: everything was set up; there is no command.
		fmt.Fprintln(status, "ready")
		return 0
	}
	if cfg.NoProcesses {
		// A command that may not create processes leaves none to reap
		// or signal: it replaces the helper as the namespace's PID 1.
		return execWithoutProcesses(cfg, status, fail)
	}
	signals := make(chan os.Signal, 8)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	child, err := os.StartProcess(cfg.Path, cfg.Argv, commandAttr(cfg))
	if err != nil {
		return fail("start %s: %v", cfg.Path, unwrapPathError(err))
	}
	fmt.Fprintln(status, "ready")
	releaseStdio()
	return superviseChild(child.Pid, signals, status)
}

// commandAttr starts the command as the helper's child.
func commandAttr(cfg helperConfig) *os.ProcAttr {
	return &os.ProcAttr{
		Dir: cfg.Dir, Env: cfg.Env, Files: []*os.File{os.Stdin, os.Stdout, os.Stderr},
		// Its own group, so a forwarded signal reaches its pipeline; it
		// dies with the helper even before the namespace is torn down.
		Sys: &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL},
	}
}

// superviseChild reaps every process of the namespace (they are all
// orphaned to PID 1) and forwards termination signals to the command's
// group until the command exits; the helper then exits with its status,
// and the kernel kills whatever is left in the namespace.
func superviseChild(pid int, signals chan os.Signal, status *os.File) int {
	exited := make(chan syscall.WaitStatus, 1)
	go func() {
		for {
			var ws syscall.WaitStatus
			got, err := syscall.Wait4(-1, &ws, 0, nil)
			if err == syscall.EINTR {
				continue
			}
			if err != nil || got == pid {
				exited <- ws
				return
			}
		}
	}()
	for {
		select {
		case sig := <-signals:
			_ = syscall.Kill(-pid, sig.(syscall.Signal))
		case ws := <-exited:
			if ws.Signaled() {
				fmt.Fprintf(status, "signal %d\n", int(ws.Signal()))
				return exitSignal + int(ws.Signal())
			}
			fmt.Fprintf(status, "exit %d\n", ws.ExitStatus())
			return ws.ExitStatus()
		}
	}
}

// releaseStdio drops the helper's copies of the command's streams, so the
// Host sees EOF as soon as the command's tree closed them.
func releaseStdio() {
	null, err := unix.Open("/dev/null", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	for fd := 0; fd <= 2; fd++ {
		_ = unix.Dup3(null, fd, 0)
	}
	_ = unix.Close(null)
}

func setLimits(l Limits) error {
	if l.FileBytes > 0 {
		if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &unix.Rlimit{Cur: l.FileBytes, Max: l.FileBytes}); err != nil {
			return err
		}
	}
	if l.Processes > 0 {
		if err := unix.Setrlimit(unix.RLIMIT_NPROC, &unix.Rlimit{Cur: l.Processes, Max: l.Processes}); err != nil {
			return err
		}
	}
	if l.CPUSeconds > 0 {
		if err := unix.Setrlimit(unix.RLIMIT_CPU, &unix.Rlimit{Cur: l.CPUSeconds, Max: l.CPUSeconds}); err != nil {
			return err
		}
	}
	return nil
}

func unwrapPathError(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
