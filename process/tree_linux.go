package process

import (
	"os"
	"runtime"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// tree is the set of processes one command owns: its leader (the process
// the Manager started, leader of its own session and process group) and
// every member found so far.
//
// A process belongs to the tree when, in one consistent reading of /proc:
//   - its parent is the leader or a member (it was forked inside the tree);
//   - its process group or session id is the pid of the leader or of a
//     member (a group or session id stays allocated, and so cannot name
//     anything else, while that process exists — which is checked by its
//     start time in the same reading);
//   - or it is a child of the Host itself (an orphan adopted by the Host,
//     a subreaper) whose environment carries this tree's TreeEnv value and
//     which started after the leader (commands only: a server has none).
//
// Members are recorded with their start times, so a member that dies and
// whose pid is reused is dropped, never confused with the newcomer.
type tree struct {
	cookie      string // the spawn id, the TreeEnv value; "" for a server
	leader      int
	leaderStart uint64
	members     map[int]member // guarded by sysState.mu
	// sandboxed trees are led by the sandbox helper, PID 1 of their PID
	// namespace: killing it kills every member at once.
	sandboxed bool
	// server trees live as long as their owner wants; they are
	// re-examined every serverTrackEvery ticks only (see tracker).
	server bool
}

type member struct {
	start uint64
	pgrp  int
}

// sysState is the Linux part of a Manager.
type sysState struct {
	self int

	mu      sync.Mutex // guards everything below; held while scanning, attributing, reaping and registering leaders
	trees   map[*tree]struct{}
	leaders map[int]uint64     // every unreaped leader of this Manager: pid → start
	cookies map[procKey]string // children of the Host classified by their TreeEnv value ("" when none)
	tab     map[int]procEntry  // the last scan
	buf     []byte

	spawnReq chan func()
	stopCh   chan struct{}
	wg       sync.WaitGroup // the spawner and the tracker
}

func (s *sysState) start(m *Manager) {
	s.self = os.Getpid()
	s.trees = make(map[*tree]struct{})
	s.leaders = make(map[int]uint64)
	s.cookies = make(map[procKey]string)
	s.tab = make(map[int]procEntry)
	s.buf = make([]byte, statBufSize)
	s.spawnReq = make(chan func())
	s.stopCh = make(chan struct{})
	s.wg.Add(2)
	go s.spawner()
	go s.tracker(m)
}

// stop ends the spawner and the tracker. It runs only after every start
// and every supervising goroutine finished.
func (s *sysState) stop() {
	close(s.stopCh)
	s.wg.Wait()
}

// spawner starts every command of the Manager from one OS thread that
// lives as long as the Manager. Pdeathsig is tied to the thread that
// forked, not to the process: a command forked on a thread that later
// exits (a goroutine that ended while locked to it) would be killed at
// once.
func (s *sysState) spawner() {
	defer s.wg.Done()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for {
		select {
		case f := <-s.spawnReq:
			f()
		case <-s.stopCh:
			return
		}
	}
}

// onSpawner runs f on the spawner thread.
func (s *sysState) onSpawner(f func() error) error {
	done := make(chan error, 1)
	s.spawnReq <- func() { done <- f() }
	return <-done
}

// serverTrackEvery is how many tracker ticks pass between two scans
// while only unsandboxed servers run: a scan reads every process's stat
// line (about 2 ms for a hundred processes), which a command pays for the
// seconds it runs but an idle server would pay for as long as the Host
// lives. A sandboxed server needs none: its descendants cannot leave its
// PID namespace, whose init (the sandbox helper) reaps them.
const serverTrackEvery = 10

// tracker re-examines the live trees periodically: descendants are
// recorded while their ancestry is still visible, and adopted members
// that exited are reaped while their command still runs.
func (s *sysState) tracker(m *Manager) {
	defer s.wg.Done()
	tick := time.NewTicker(trackInterval)
	defer tick.Stop()
	for n := 1; ; n++ {
		select {
		case <-s.stopCh:
			return
		case <-tick.C:
			s.mu.Lock()
			if s.trackDueLocked(n) {
				if err := scanProcs(s.tab, s.buf); err != nil {
					m.log.Warn("process: /proc scan failed", "err", err)
				} else {
					for t := range s.trees {
						s.attributeLocked(t)
						s.reapLocked(t)
					}
					s.pruneCookiesLocked()
				}
			}
			s.mu.Unlock()
		}
	}
}

// trackDueLocked reports whether tick n scans: always while a command
// runs, every serverTrackEvery ticks while an unsandboxed server does.
func (s *sysState) trackDueLocked(n int) bool {
	due := false
	for t := range s.trees {
		switch {
		case !t.server:
			return true
		case !t.sandboxed && n%serverTrackEvery == 0:
			due = true
		}
	}
	return due
}

func (s *sysState) addTree(t *tree) {
	s.mu.Lock()
	s.trees[t] = struct{}{}
	s.mu.Unlock()
}

// removeTree forgets a finished tree; its leader was just reaped.
func (s *sysState) removeTree(t *tree) {
	s.mu.Lock()
	delete(s.trees, t)
	delete(s.leaders, t.leader)
	s.mu.Unlock()
}

// sweep scans /proc, updates t's members, reaps the adopted members that
// exited and reports whether anything of t is still alive: the leader
// (not yet a zombie) or any member (a zombie member counts until reaped).
func (s *sysState) sweep(t *tree) (live bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := scanProcs(s.tab, s.buf); err != nil {
		return true, err
	}
	s.attributeLocked(t)
	s.reapLocked(t)
	s.pruneCookiesLocked()
	if e, ok := s.tab[t.leader]; ok && e.start == t.leaderStart && e.state != 'Z' {
		return true, nil
	}
	return len(t.members) > 0, nil
}

// quickLive reports whether the leader or a known member is still alive,
// reading only their own /proc entries. It finds no new member: a tree is
// declared gone only by sweep.
func (s *sysState) quickLive(t *tree) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := readProcStat(t.leader, s.buf); ok && e.start == t.leaderStart && e.state != 'Z' {
		return true
	}
	for pid, mb := range t.members {
		if e, ok := readProcStat(pid, s.buf); ok && e.start == mb.start && e.state != 'Z' {
			return true
		}
	}
	return false
}

// attributeLocked updates t.members from s.tab (see tree).
func (s *sysState) attributeLocked(t *tree) {
	for pid, mb := range t.members {
		if e, ok := s.tab[pid]; !ok || e.start != mb.start {
			delete(t.members, pid)
		}
	}
	leaderOK := false
	if e, ok := s.tab[t.leader]; ok && e.start == t.leaderStart {
		leaderOK = true
	}
	anchor := func(id int) bool {
		if id == t.leader {
			return leaderOK
		}
		_, ok := t.members[id]
		return ok
	}
	// Iterate to a fixed point: a new member may anchor further ones. Each
	// pass adds at least one process, so this ends.
	for changed := true; changed; {
		changed = false
		for pid, e := range s.tab {
			if pid == t.leader || pid == s.self {
				continue
			}
			if _, ok := t.members[pid]; ok {
				continue
			}
			if st, ok := s.leaders[pid]; ok && st == e.start {
				continue // a leader of this Manager is never a member
			}
			if anchor(e.ppid) || anchor(e.pgrp) || anchor(e.sid) ||
				(t.cookie != "" && e.ppid == s.self && e.state != 'Z' && e.start >= t.leaderStart && s.cookieLocked(e) == t.cookie) {
				t.members[pid] = member{start: e.start, pgrp: e.pgrp}
				changed = true
			}
		}
	}
	for pid, mb := range t.members {
		mb.pgrp = s.tab[pid].pgrp
		t.members[pid] = mb
	}
}

// cookieLocked returns the TreeEnv value of a child of the Host, read once
// per process.
func (s *sysState) cookieLocked(e procEntry) string {
	k := e.key()
	if c, ok := s.cookies[k]; ok {
		return c
	}
	c := environValue(e.pid, TreeEnv)
	s.cookies[k] = c
	return c
}

func (s *sysState) pruneCookiesLocked() {
	for k := range s.cookies {
		if e, ok := s.tab[k.pid]; !ok || e.start != k.start {
			delete(s.cookies, k)
		}
	}
}

// reapLocked collects the exit status of t's members that are zombies and
// children of the Host: orphans it adopted as a subreaper. Nothing else is
// ever waited for here: not the leader (reaped by its supervisor through
// os/exec) and not any process the Host started by other means, so no
// exit status is stolen from a Wait elsewhere. A member's pid cannot be
// reused before this reaps it, so waiting for it by pid is exact.
func (s *sysState) reapLocked(t *tree) {
	for pid := range t.members {
		e := s.tab[pid]
		if e.state != 'Z' || e.ppid != s.self {
			continue
		}
		var ws syscall.WaitStatus
		for {
			wpid, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
			if err == syscall.EINTR {
				continue
			}
			if wpid == pid || err == syscall.ECHILD {
				delete(t.members, pid)
			}
			break
		}
	}
}

// signal sends sig to the leader's process group and to every member
// outside it. The leader stays unreaped until its tree is gone, so its
// pid, group and session ids cannot have been reused; members are signalled
// through a pidfd after their start time was checked again.
func (s *sysState) signal(t *tree, sig syscall.Signal) {
	_ = syscall.Kill(-t.leader, sig)
	if t.sandboxed && sig == syscall.SIGKILL {
		// The namespace dies with its PID 1, every member in one step.
		// Killing members one by one first would let a survivor see a
		// child die and run on (print, write) before its own turn.
		return
	}
	s.mu.Lock()
	targets := make([]procKey, 0, len(t.members))
	for pid, mb := range t.members {
		if mb.pgrp != t.leader || sig == syscall.SIGKILL {
			targets = append(targets, procKey{pid, mb.start})
		}
	}
	s.mu.Unlock()
	buf := make([]byte, statBufSize)
	for _, k := range targets {
		signalExact(k.pid, k.start, sig, buf)
	}
}

// signalExact signals pid only if it is still the process that started at
// start. The pidfd pins the process: once its start time is confirmed, the
// signal cannot reach a process that reused the pid.
func signalExact(pid int, start uint64, sig syscall.Signal, buf []byte) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err == unix.ENOSYS {
		// Kernels before 5.3: check and signal, a narrow window instead
		// of none.
		if e, ok := readProcStat(pid, buf); ok && e.start == start {
			_ = syscall.Kill(pid, sig)
		}
		return
	}
	if err != nil {
		return
	}
	defer unix.Close(fd)
	if e, ok := readProcStat(pid, buf); !ok || e.start != start {
		return
	}
	_ = unix.PidfdSendSignal(fd, sig, nil, 0)
}
