package process

import (
	"context"
	"io"
	"os"
	"sync"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/sandbox"
)

// ServerSpec describes a long-lived child that speaks over its standard
// input and output (an MCP stdio server): the caller keeps both pipes for
// as long as the server runs.
type ServerSpec struct {
	// Argv is the command line; Argv[0] is resolved as for Spec.
	Argv []string
	// Dir is the working directory; empty means the Host's.
	Dir string
	// Env is the complete environment, passed exactly: unlike a command,
	// a server does not get TreeEnv (its environment is part of its
	// contract), so its tree is found by ancestry, group and session.
	Env []string
	// Stderr receives what the server writes to its standard error, from
	// a goroutine the Manager owns, until the pipe reaches EOF (or is
	// closed under a holder the Manager could not attribute). It bounds
	// what it keeps itself; it must not block long, or the server stalls
	// on a full pipe. Its errors are ignored. Nil discards.
	Stderr io.Writer
	// Sandbox, when set, runs the server and its whole tree inside the OS
	// sandbox with this policy; one that cannot be built fails the start
	// (EUNAVAILABLE) and nothing runs.
	Sandbox *sandbox.Policy
}

// Server is a long-lived child started with StartServer. Its methods are
// safe for concurrent use.
//
// When its process exits on its own, the rest of its tree is terminated
// and reaped at once; the pipes stay open (what the server wrote before it
// exited can still be read) until Stop, which every caller must call.
type Server struct {
	spawnID string
	pid     int
	marker  string
	stdin   *os.File // write end
	stdout  *os.File // read end

	exited chan struct{} // closed when the server's process exited

	stopOnce sync.Once
	stopReq  chan struct{} // closed by the first Stop
	grace    time.Duration // set before stopReq is closed
	killOnce sync.Once
	killReq  chan struct{} // closed when the Manager closes
	done     chan struct{} // closed once err is final
	err      error
}

func newServer(spawnID string, pid int, marker string, stdin, stdout *os.File) *Server {
	return &Server{
		spawnID: spawnID, pid: pid, marker: marker, stdin: stdin, stdout: stdout,
		exited: make(chan struct{}), stopReq: make(chan struct{}), killReq: make(chan struct{}), done: make(chan struct{}),
	}
}

// SpawnID returns the Host-unique id of this start ("proc_…").
func (s *Server) SpawnID() string { return s.spawnID }

// PID returns the process id of the server's own process, which is also
// its process group and session id.
func (s *Server) PID() int { return s.pid }

// StartMarker returns the OS start marker of the server's process.
func (s *Server) StartMarker() string { return s.marker }

// Stdin is the server's standard input. Stop closes it.
func (s *Server) Stdin() io.WriteCloser { return s.stdin }

// Stdout is the server's standard output. Stop closes it.
func (s *Server) Stdout() io.ReadCloser { return s.stdout }

// Exited is closed once the server's process has exited (killed or on its
// own); its tree is then being terminated and reaped.
func (s *Server) Exited() <-chan struct{} { return s.exited }

// Stop ends the server gracefully: its standard input is closed and it
// has grace to exit; then whatever is left of its tree is terminated
// (SIGTERM, KillGrace, SIGKILL) and reaped, its stderr drained and both
// pipes closed. Every caller gets the same outcome, the first caller's
// grace applies. ctx bounds only the waiting: when it ends first Stop
// returns ECANCELED and the stop completes in the background. A non-nil
// error otherwise means the tree could not be fully terminated
// (EINTERNAL).
func (s *Server) Stop(ctx context.Context, grace time.Duration) error {
	s.stopOnce.Do(func() {
		s.grace = grace
		close(s.stopReq)
	})
	select {
	case <-s.done:
		return s.err
	case <-ctx.Done():
		return demiurge.WrapError(demiurge.ECANCELED, ctx.Err(), "stop server %s: %v", s.spawnID, ctx.Err())
	}
}

// requestCancel is the Manager's Close: no grace.
func (s *Server) requestCancel() {
	s.killOnce.Do(func() { close(s.killReq) })
}

func (s *Server) finish(err error) {
	s.err = err
	close(s.done)
}

// StartServer starts a long-lived server (see ServerSpec and Server). ctx
// bounds only the start. Errors are those of Start: EINVALID spec,
// ENOTFOUND executable or working directory, EUNAVAILABLE closed Manager
// or unbuildable sandbox, EINTERNAL.
func (m *Manager) StartServer(ctx context.Context, spec ServerSpec) (*Server, error) {
	if err := ctx.Err(); err != nil {
		return nil, demiurge.WrapError(demiurge.ECANCELED, err, "process start cancelled: %v", err)
	}
	if err := checkCommand(spec.Argv, spec.Env); err != nil {
		return nil, err
	}
	spec.Argv = append([]string(nil), spec.Argv...)
	if spec.Stderr == nil {
		spec.Stderr = io.Discard
	}
	resolved, err := resolve(spec.Argv[0], spec.Dir, spec.Env)
	if err != nil {
		return nil, err
	}
	if !m.admit() {
		return nil, errClosed
	}
	srv, err := m.spawnServer(spec, resolved)
	if err != nil {
		m.wg.Done()
		return nil, err
	}
	return srv, nil
}

// copyStderr drains r into w until EOF or until r is closed under it; w's
// errors never stop the draining.
func copyStderr(w io.Writer, r io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			_, _ = w.Write(buf[:n])
		}
		if err != nil {
			return
		}
	}
}
