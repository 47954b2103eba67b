package mcp

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/process"
	"github.com/demiurge/demiurge/sandbox"
	"golang.org/x/sys/unix"
)

// stdioProc is one stdio server process: its pipes, its identity (pid and
// start marker) and its stderr capture. The process leads its own session
// (so its own process group) and dies with the Host (parent-death signal).
type stdioProc struct {
	m      *Manager
	id     string
	cmd    *exec.Cmd
	pid    int
	marker string
	stdin  *os.File // write end
	stdout *os.File // read end
	stderr *stderrCapture
	exited chan struct{} // closed when the leader exited (not yet reaped)

	once sync.Once
}

// startStdio starts the server's command with exactly env, in dir.
func (m *Manager) startStdio(d Declaration, env []string, dir string, box *sandbox.Policy) (*stdioProc, error) {
	path, err := lookExecutable(d.Command, dir, env)
	if err != nil {
		return nil, err
	}
	var files [6]*os.File // stdinR, stdinW, stdoutR, stdoutW, stderrR, stderrW
	for i := 0; i < 6; i += 2 {
		if files[i], files[i+1], err = os.Pipe(); err != nil {
			closeFiles(files[:]...)
			return nil, demiurge.WrapError(demiurge.EINTERNAL, err, "MCP server %s: pipes: %v", d.ID, err)
		}
	}
	cmd := &exec.Cmd{
		Path:   path,
		Args:   append([]string{d.Command}, d.Args...),
		Env:    env,
		Dir:    dir,
		Stdin:  files[0],
		Stdout: files[3],
		Stderr: files[5],
		SysProcAttr: &syscall.SysProcAttr{
			Setsid:    true,
			Pdeathsig: syscall.SIGKILL,
		},
	}
	var launch *sandbox.Launch
	if box != nil {
		if launch, err = sandbox.Wrap(cmd, *box); err != nil {
			closeFiles(files[:]...)
			return nil, demiurge.WrapError(demiurge.EUNAVAILABLE, err, "MCP server %s: %v", d.ID, err)
		}
	}
	err = m.spawner.run(cmd.Start)
	closeFiles(files[0], files[3], files[5])
	if err != nil {
		closeFiles(files[1], files[2], files[4])
		if launch != nil {
			launch.Abort()
		}
		return nil, demiurge.WrapError(demiurge.EUNAVAILABLE, err, "MCP server %s: start %s: %s", d.ID, d.Command, reason(err))
	}
	pid := cmd.Process.Pid
	if launch != nil {
		err := launch.Started()
		if err != nil {
			// Nothing of the server ran: end the helper.
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			_ = cmd.Wait()
		}
		launch.Release() // the helper's later reports are not needed
		if err != nil {
			closeFiles(files[1], files[2], files[4])
			return nil, demiurge.WrapError(demiurge.EUNAVAILABLE, err, "MCP server %s: %v", d.ID, err)
		}
	}
	marker, err := process.StartMarker(pid)
	if err != nil {
		// A process that cannot be identified cannot be owned: its group is
		// still its own (it is not reaped yet), so end it now.
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		_ = cmd.Wait()
		closeFiles(files[1], files[2], files[4])
		return nil, demiurge.WrapError(demiurge.EINTERNAL, err, "MCP server %s: started but its start marker cannot be read", d.ID)
	}
	p := &stdioProc{
		m: m, id: d.ID, cmd: cmd, pid: pid, marker: marker,
		stdin: files[1], stdout: files[2], stderr: newStderrCapture(files[4]),
		exited: make(chan struct{}),
	}
	m.wg.Go(func() {
		waitExited(pid)
		close(p.exited)
	})
	m.wg.Go(p.stderr.drain)
	return p, nil
}

// shutdown ends the server the way the MCP stdio transport asks: stdin is
// closed and the server has grace to exit; then whatever is left of its
// process group and session is terminated (SIGTERM, then SIGKILL), the
// leader and any member orphaned to the Host are reaped, and the captured
// stderr is redacted and appended to the log. It is idempotent and
// blocks until all of that is done.
func (p *stdioProc) shutdown(grace time.Duration, secrets resolvedSecrets) {
	p.once.Do(func() {
		_ = p.stdin.Close()
		if grace > 0 {
			t := time.NewTimer(grace)
			select {
			case <-p.exited:
			case <-t.C:
			}
			t.Stop()
		}
		if err := process.KillGroupIfSame(p.pid, p.marker); err != nil && demiurge.ErrorCode(err) != demiurge.ENOTFOUND {
			p.m.log.Warn("mcp: stdio server group not fully terminated", "server", p.id, "pid", p.pid, "error", demiurge.ErrorMessage(err))
		}
		_ = p.cmd.Wait()
		reapOrphans(p.pid)
		_ = p.stdout.Close()
		select {
		case <-p.stderr.done:
		case <-time.After(time.Second):
			// A descendant that left the session still holds the pipe.
			_ = p.stderr.r.Close()
			<-p.stderr.done
		}
		_ = p.stderr.r.Close()
		text, truncated := p.stderr.text()
		if err := p.m.stderrLog.append(p.id, text, truncated, secrets.red); err != nil {
			p.m.log.Warn("mcp: cannot append server stderr to the log", "server", p.id, "error", err.Error())
		}
	})
}

// alive reports whether the leader has not exited yet.
func (p *stdioProc) alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// waitExited blocks until pid exits, without reaping it (WNOWAIT): while
// it stays a zombie its pid, group and session ids stay allocated, so the
// group kill cannot reach a newcomer.
func waitExited(pid int) {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != syscall.EINTR {
			return
		}
	}
}

// reapOrphans reaps zombies that belonged to the session led by leader and
// were re-parented to the Host (a child subreaper): the server's children
// that outlived it and were then killed with its group. Only processes of
// that session whose parent is the Host are touched, so no exit status of
// any other child is taken.
func reapOrphans(leader int) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	self := os.Getpid()
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == leader {
			continue
		}
		st, ok := readStat(pid)
		if !ok || st.ppid != self || st.state != 'Z' || (st.sid != leader && st.pgrp != leader) {
			continue
		}
		var ws unix.WaitStatus
		_, _ = unix.Wait4(pid, &ws, unix.WNOHANG, nil)
	}
}

type procStat struct {
	state           byte
	ppid, pgrp, sid int
}

// readStat reads fields 3-6 of /proc/<pid>/stat (after the command name,
// which may itself hold spaces and parentheses).
func readStat(pid int) (procStat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return procStat{}, false
	}
	f := strings.Fields(string(b[i+2:]))
	if len(f) < 4 || len(f[0]) != 1 {
		return procStat{}, false
	}
	ppid, e1 := strconv.Atoi(f[1])
	pgrp, e2 := strconv.Atoi(f[2])
	sid, e3 := strconv.Atoi(f[3])
	if e1 != nil || e2 != nil || e3 != nil {
		return procStat{}, false
	}
	return procStat{state: f[0][0], ppid: ppid, pgrp: pgrp, sid: sid}, true
}

// lookExecutable resolves command the way a shell would, but against the
// PATH of the server's own environment: a name with a slash is taken
// relative to dir, a bare name is searched in the absolute PATH entries.
func lookExecutable(command, dir string, env []string) (string, error) {
	if strings.ContainsRune(command, '/') {
		p := command
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if !isExecutable(p) {
			return "", demiurge.Errorf(demiurge.ENOTFOUND, "executable %s not found or not executable", command)
		}
		return filepath.Clean(p), nil
	}
	pathList := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathList = v
		}
	}
	for _, d := range filepath.SplitList(pathList) {
		if d == "" || !filepath.IsAbs(d) {
			continue // a relative entry would depend on the working directory
		}
		if p := filepath.Join(d, command); isExecutable(p) {
			return p, nil
		}
	}
	return "", demiurge.Errorf(demiurge.ENOTFOUND, "executable %s not found in the server's PATH", command)
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

func closeFiles(fs ...*os.File) {
	for _, f := range fs {
		if f != nil {
			_ = f.Close()
		}
	}
}

// spawner starts processes from one OS thread that lives as long as the
// Manager: the parent-death signal fires when the thread that forked the
// child exits, so a thread Go may retire must never fork a server.
type spawner struct {
	jobs chan func()
	stop chan struct{}
	done chan struct{}
}

func newSpawner() *spawner {
	s := &spawner{jobs: make(chan func()), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		runtime.LockOSThread()
		// Never unlocked: the thread exits with the goroutine, after every
		// child it forked has been reaped (Close waits for that).
		for {
			select {
			case job := <-s.jobs:
				job()
			case <-s.stop:
				return
			}
		}
	}()
	return s
}

// run runs start on the spawner thread.
func (s *spawner) run(start func() error) error {
	errc := make(chan error, 1)
	select {
	case s.jobs <- func() { errc <- start() }:
		return <-errc
	case <-s.stop:
		return errManagerClosed
	}
}

func (s *spawner) close() {
	close(s.stop)
	<-s.done
}
