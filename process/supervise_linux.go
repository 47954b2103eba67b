package process

import (
	"os"
	"syscall"
	"time"

	"github.com/demiurge/demiurge"
	"golang.org/x/sys/unix"
)

// supervise owns one command from start to Result: it drains the pipes,
// watches the leader, the timeout, cancellation and (for background
// commands) the artifacts, terminates the tree when one of them says so,
// reaps everything and publishes the Result.
func (m *Manager) supervise(p *spawned) {
	defer m.wg.Done()
	defer m.unregister(p.h)
	s := &m.sys
	t := p.tree

	exited := make(chan struct{})
	go func() {
		waitExited(t.leader)
		close(exited)
	}()
	drained := make(chan struct{}, len(p.drains))
	for _, d := range p.drains {
		go func() {
			d.run()
			drained <- struct{}{}
		}()
	}

	var timeoutC, delayC <-chan time.Time
	if p.spec.Timeout > 0 {
		timer := time.NewTimer(time.Until(p.started.Add(p.spec.Timeout)))
		defer timer.Stop()
		timeoutC = timer.C
	}
	var (
		timedOut, cancelled bool
		leaderExited        bool
		ndrained            int
		why                 string // why a tree that finished on its own is terminated
	)
	exitedC := (<-chan struct{})(exited)
wait:
	for {
		select {
		case <-exitedC:
			exitedC, leaderExited = nil, true
			if ndrained == len(p.drains) {
				break wait
			}
			// Descendants still hold the pipes: let them finish writing,
			// but not for ever.
			delay := time.NewTimer(m.waitDelay)
			defer delay.Stop()
			delayC = delay.C
		case <-drained:
			if ndrained++; ndrained == len(p.drains) && leaderExited {
				break wait
			}
		case <-timeoutC:
			timedOut = true
			break wait
		case <-p.h.cancelReq:
			cancelled = true
			break wait
		case <-p.artFailed:
			why = "output artifact failed"
			break wait
		case <-delayC:
			why = "descendants kept the output pipes open after the command exited"
			break wait
		}
	}

	termErr := m.terminate(t)
	if termErr != nil {
		m.log.Warn("process: tree not fully terminated", "spawn_id", p.h.spawnID, "pid", t.leader, "err", termErr)
	} else if why != "" {
		m.log.Info("process: tree terminated", "spawn_id", p.h.spawnID, "pid", t.leader, "reason", why)
	}
	<-exited

	// Every attributed holder of the pipes is gone; one the Manager could
	// not attribute loses its pipe after drainJoin.
	join := time.NewTimer(drainJoin)
	for ndrained < len(p.drains) {
		select {
		case <-drained:
			ndrained++
		case <-join.C:
			m.log.Warn("process: output pipe held by an untracked process; closing it", "spawn_id", p.h.spawnID, "pid", t.leader)
			closeAll(p.pipes[:], nil)
			p.pipes = [2]*os.File{}
			for ; ndrained < len(p.drains); ndrained++ {
				<-drained
			}
		}
	}
	join.Stop()
	closeAll(p.pipes[:], nil)

	waitErr := p.cmd.Wait() // reaps the leader, now that nothing may signal its ids
	s.removeTree(t)

	res := Result{
		SpawnID: p.h.spawnID, PID: t.leader, StartMarker: p.h.marker, Resolved: p.resolved,
		TimedOut: timedOut, Cancelled: cancelled,
	}
	if st := p.cmd.ProcessState; st != nil {
		ws, ok := st.Sys().(syscall.WaitStatus)
		switch {
		case !ok:
			res.ExitCode = st.ExitCode()
		case ws.Exited():
			res.ExitCode = ws.ExitStatus()
		case ws.Signaled():
			res.ExitCode = 128 + int(ws.Signal())
			res.Signal = unix.SignalName(ws.Signal())
		}
		if p.launch != nil {
			// The helper exits with 128+signal for a command a signal
			// ended; it says which, and which limit the signal means.
			if sig, limit := p.launch.Exit(ws); sig != 0 {
				res.Signal, res.Limit = unix.SignalName(sig), limit
			}
		}
	} else if termErr == nil {
		termErr = demiurge.WrapError(demiurge.EINTERNAL, waitErr, "process %d: no exit status", t.leader)
	}
	// The command is over: its tree is gone and its output drained.
	// Syncing the artifacts is the Host's own work and not counted.
	res.Duration = time.Since(p.started)
	var artErr ArtifactError
	for i, a := range p.arts {
		if a == nil {
			continue
		}
		a.finish()
		if a.err != nil {
			if i == 0 {
				artErr.Stdout = a.err
			} else {
				artErr.Stderr = a.err
			}
		}
	}
	if p.artDir != "" {
		_ = os.Remove(p.artDir) // only succeeds when no stream was stored
	}
	res.Stdout, res.Stderr = p.drains[0].result(), p.drains[1].result()
	if artErr.Stdout != nil || artErr.Stderr != nil {
		res.ArtifactErr = &artErr
	}
	p.h.finish(res, termErr)
}

// terminate ends everything still alive in t: SIGTERM (and SIGCONT, so a
// stopped process can act on it) to the group and every member, up to
// KillGrace for them to exit, then SIGKILL until the tree is gone. Adopted
// members are reaped on the way. Nothing is signalled when nothing is
// alive. Between full sweeps (every fullSweepEvery polls, and always before
// the tree is declared gone) only the known processes are looked at.
func (m *Manager) terminate(t *tree) error {
	const fullSweepEvery = 5
	s := &m.sys
	if live, _ := s.sweep(t); !live {
		return nil
	}
	s.signal(t, syscall.SIGTERM)
	s.signal(t, syscall.SIGCONT)
	grace := time.Now().Add(m.killGrace)
	for i := 1; time.Now().Before(grace); i++ {
		time.Sleep(min(pollInterval, time.Until(grace)))
		if i%fullSweepEvery != 0 && s.quickLive(t) {
			continue
		}
		if live, _ := s.sweep(t); !live {
			return nil
		}
	}
	deadline := time.Now().Add(killWait)
	for {
		s.signal(t, syscall.SIGKILL)
		time.Sleep(time.Millisecond)
		live, err := s.sweep(t)
		if !live {
			return nil
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = demiurge.Errorf(demiurge.EINTERNAL, "process tree of %d still alive %s after SIGKILL", t.leader, killWait)
			}
			return err
		}
		time.Sleep(pollInterval)
	}
}
