package process

import (
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/sandbox"
)

// spawnServer starts a server (see launch) with three pipes and hands it
// to a supervising goroutine.
func (m *Manager) spawnServer(spec ServerSpec, resolved string) (*Server, error) {
	spawnID := demiurge.NewID("proc")
	if m.spawnHook != nil {
		m.spawnHook(spawnID)
	}
	// The child's ends first (stdin read, stdout write, stderr write),
	// then the Host's.
	var child, host [3]*os.File
	for i := range child {
		r, w, err := os.Pipe()
		if err != nil {
			closeAll(child[:], host[:])
			return nil, demiurge.WrapError(demiurge.EINTERNAL, err, "process pipes: %s", demiurge.IOReason(err))
		}
		if i == 0 {
			child[i], host[i] = r, w
		} else {
			child[i], host[i] = w, r
		}
	}
	cmd := &exec.Cmd{
		Path:   resolved,
		Args:   spec.Argv,
		Env:    spec.Env,
		Dir:    spec.Dir,
		Stdin:  child[0],
		Stdout: child[1],
		Stderr: child[2],
	}
	l, err := m.launch(cmd, spec.Sandbox, child[:]...)
	if err != nil {
		closeAll(host[:], nil)
		return nil, err
	}
	srv := newServer(spawnID, l.pid, l.marker, host[0], host[1])
	t := &tree{leader: l.pid, leaderStart: l.start, members: make(map[int]member), sandboxed: l.launch != nil, server: true}
	m.sys.addTree(t)
	m.register(srv)
	go m.superviseServer(srv, cmd, t, l.launch, host[2], spec.Stderr)
	return srv, nil
}

// superviseServer owns one server from start to Stop: it drains stderr,
// watches the server's process, Stop and the Manager's Close, terminates
// the tree when the server exited on its own or was asked to stop, reaps
// everything and closes the pipes once Stop (or Close) asked for it.
func (m *Manager) superviseServer(srv *Server, cmd *exec.Cmd, t *tree, launch *sandbox.Launch, stderr *os.File, sink io.Writer) {
	defer m.wg.Done()
	defer m.unregister(srv)
	go func() {
		waitExited(t.leader)
		close(srv.exited)
	}()
	drained := make(chan struct{})
	go func() {
		copyStderr(sink, stderr)
		close(drained)
	}()

	stopping := true
	select {
	case <-srv.exited:
		stopping = false
	case <-srv.stopReq:
	case <-srv.killReq:
	}
	if stopping {
		// Record the tree while its ancestry is visible: a descendant
		// that left the session would be lost once the server exits.
		_, _ = m.sys.sweep(t)
		// End of input is the stdio transport's request to exit.
		_ = srv.stdin.Close()
		if srv.grace > 0 && !isClosed(srv.killReq) {
			grace := time.NewTimer(srv.grace)
			select {
			case <-srv.exited:
			case <-grace.C:
			case <-srv.killReq:
			}
			grace.Stop()
		}
	}
	termErr := m.terminate(t)
	if termErr != nil {
		m.log.Warn("process: server tree not fully terminated", "spawn_id", srv.spawnID, "pid", t.leader, "err", termErr)
	}
	<-srv.exited

	// Every attributed holder of the stderr pipe is gone; one the Manager
	// could not attribute loses it after drainJoin.
	join := time.NewTimer(drainJoin)
	select {
	case <-drained:
	case <-join.C:
		m.log.Warn("process: server stderr held by an untracked process; closing it", "spawn_id", srv.spawnID, "pid", t.leader)
		_ = stderr.Close()
		<-drained
	}
	join.Stop()
	_ = stderr.Close()

	_ = cmd.Wait() // reaps the leader, now that nothing may signal its ids
	m.sys.removeTree(t)
	if launch != nil {
		launch.Release()
	}
	if !stopping {
		// The owner still holds the pipes: what the server wrote before it
		// exited stays readable until Stop.
		select {
		case <-srv.stopReq:
		case <-srv.killReq:
		}
	}
	_ = srv.stdin.Close()
	_ = srv.stdout.Close()
	srv.finish(termErr)
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
