package process

import (
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/sandbox"
	"golang.org/x/sys/unix"
)

var (
	subreaperOnce sync.Once
	subreaperErr  error
)

// platformInit makes the Host a child subreaper, once per process: an
// orphaned descendant of a command then reparents to the Host instead of
// init, where the Manager can still find, kill and reap it. The flag is
// never cleared; it only matters for processes the Host started.
func platformInit() error {
	subreaperOnce.Do(func() {
		if _, err := os.Stat("/proc/self/stat"); err != nil {
			subreaperErr = demiurge.WrapError(demiurge.EUNSUPPORTED, err, "process trees need /proc")
			return
		}
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			subreaperErr = demiurge.WrapError(demiurge.EUNSUPPORTED, err, "process trees need PR_SET_CHILD_SUBREAPER")
		}
	})
	return subreaperErr
}

// spawned is what a supervisor owns of one started command.
type spawned struct {
	h          *Handle
	cmd        *exec.Cmd
	tree       *tree
	spec       Spec
	resolved   string
	started    time.Time
	foreground bool
	artDir     string
	arts       [2]*artifactFile // stdout, stderr; nil entries without artifacts
	pipes      [2]*os.File      // read ends
	drains     [2]*drain
	artFailed  chan struct{}
	launch     *sandbox.Launch // nil for an unsandboxed command
}

// spawn starts the command (see launch) and hands it to a supervising
// goroutine.
func (m *Manager) spawn(spec Spec, resolved string, foreground bool) (*Handle, error) {
	spawnID := demiurge.NewID("proc")
	if m.spawnHook != nil {
		m.spawnHook(spawnID)
	}
	var r, w [2]*os.File
	for i := range r {
		var err error
		if r[i], w[i], err = os.Pipe(); err != nil {
			closeAll(r[:], w[:])
			return nil, demiurge.WrapError(demiurge.EINTERNAL, err, "process pipes: %s", demiurge.IOReason(err))
		}
		growPipe(r[i])
	}
	cmd := &exec.Cmd{
		Path:   resolved,
		Args:   spec.Argv,
		Env:    envWithTree(spec.Env, spawnID),
		Dir:    spec.Dir,
		Stdout: w[0],
		Stderr: w[1],
	}
	l, err := m.launch(cmd, spec.Sandbox, w[:]...)
	if err != nil {
		closeAll(r[:], nil)
		return nil, err
	}
	started, pid := l.at, l.pid

	h := newHandle(spawnID)
	h.pid, h.marker = pid, l.marker
	p := &spawned{
		h: h, cmd: cmd, spec: spec, resolved: resolved, started: started, foreground: foreground,
		pipes: r, launch: l.launch,
		tree: &tree{cookie: spawnID, leader: pid, leaderStart: l.start, members: make(map[int]member), sandboxed: l.launch != nil},
	}
	var outArt, errArt *artifactFile
	p.artDir, outArt, errArt = m.openArtifacts(spec.SessionID, spawnID)
	p.arts = [2]*artifactFile{outArt, errArt}
	if !foreground {
		p.artFailed = make(chan struct{}, 1)
		if (outArt != nil && outArt.err != nil) || (errArt != nil && errArt.err != nil) {
			p.artFailed <- struct{}{}
		}
	}
	p.drains[0] = newDrain("stdout", r[0], spec, outArt, p.artFailed)
	p.drains[1] = newDrain("stderr", r[1], spec, errArt, p.artFailed)
	m.sys.addTree(p.tree)
	m.register(h)
	go m.supervise(p)
	return h, nil
}

// leader is a started process the Manager now owns: the leader of its
// own session and process group.
type leader struct {
	pid    int
	start  uint64    // field 22 of its stat line
	at     time.Time // when it was started
	marker string
	launch *sandbox.Launch // nil when unsandboxed
}

// launch starts cmd in a new session (so in its own process group, without
// a controlling terminal) with SIGKILL as its parent-death signal, from the
// spawner thread, inside box when set, and identifies it. childEnds are
// the pipe ends cmd inherits; launch closes the Host's copies once the
// child has them. On error nothing of the command is left running and the
// caller closes its own pipe ends.
func (m *Manager) launch(cmd *exec.Cmd, box *sandbox.Policy, childEnds ...*os.File) (leader, error) {
	resolved := cmd.Path
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	var launch *sandbox.Launch
	if box != nil {
		var err error
		if launch, err = sandbox.Wrap(cmd, *box); err != nil {
			closeAll(childEnds, nil)
			return leader{}, demiurge.WrapError(demiurge.EUNAVAILABLE, err, "%v", err)
		}
	}
	s := &m.sys
	// The leader is registered before any scan can see it: a scan must
	// never take it for an adopted orphan of another tree (and one day
	// reap it).
	s.mu.Lock()
	err := s.onSpawner(cmd.Start)
	var e procEntry
	if err == nil {
		var ok bool
		if e, ok = readProcStat(cmd.Process.Pid, s.buf); ok {
			s.leaders[e.pid] = e.start
		}
	}
	s.mu.Unlock()
	at := time.Now()
	closeAll(childEnds, nil)
	if err != nil {
		if launch != nil {
			launch.Abort()
		}
		code := demiurge.EINTERNAL
		if os.IsNotExist(err) || os.IsPermission(err) {
			code = demiurge.ENOTFOUND
		}
		return leader{}, demiurge.WrapError(code, err, "start %s: %s", resolved, demiurge.IOReason(err))
	}
	pid := cmd.Process.Pid
	// abandon ends a started process the Manager will not own: its group
	// is still its own (it is not reaped yet), so killing it is safe.
	abandon := func() {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		_ = cmd.Wait()
		if launch != nil {
			launch.Release()
		}
		s.mu.Lock()
		delete(s.leaders, pid)
		s.mu.Unlock()
	}
	if launch != nil {
		if err := launch.Started(); err != nil {
			// The sandbox was not built: the command never ran.
			abandon()
			return leader{}, demiurge.WrapError(demiurge.EUNAVAILABLE, err, "%v", err)
		}
	}
	marker, merr := StartMarker(pid)
	if e.pid == 0 || merr != nil {
		// An unidentifiable process cannot be owned.
		abandon()
		return leader{}, demiurge.WrapError(demiurge.EINTERNAL, merr, "process %d started but its start marker cannot be read", pid)
	}
	return leader{pid: pid, start: e.start, at: at, marker: marker, launch: launch}, nil
}

// growPipe enlarges a pipe to 1 MiB where the system allows it: fewer
// wake-ups for a fast writer. Failure only costs throughput.
func growPipe(f *os.File) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Control(func(fd uintptr) {
		_, _ = unix.FcntlInt(fd, unix.F_SETPIPE_SZ, 1<<20)
	})
}

func closeAll(a, b []*os.File) {
	for _, fs := range [][]*os.File{a, b} {
		for _, f := range fs {
			if f != nil {
				f.Close()
			}
		}
	}
}

// waitExited blocks until the leader exits, without reaping it (WNOWAIT):
// while it stays a zombie its pid, process group and session ids remain
// allocated, so signalling them cannot reach another process.
func waitExited(pid int) {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != syscall.EINTR {
			return
		}
	}
}
