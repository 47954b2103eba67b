package process

import (
	"errors"
	"syscall"
	"time"

	"github.com/demiurge/demiurge"
	"golang.org/x/sys/unix"
)

// KillGroupIfSame terminates the process group and session led by pid —
// SIGTERM, DefaultKillGrace, SIGKILL — but only if pid is still the process
// whose start marker is marker. It is for restart recovery: a Host that
// finds a recorded command of a previous Host process can end it without
// ever signalling a process that merely reused the pid.
//
// It returns nil once nothing of the group and session is left, ENOTFOUND
// when no process with that pid and marker exists (nothing was signalled),
// EINVALID for a non-positive pid or an empty marker, and EINTERNAL when
// members survive SIGKILL. Descendants that left the group and session
// cannot be found from another Host process and are not signalled.
func KillGroupIfSame(pid int, marker string) error {
	if pid <= 1 {
		return demiurge.Errorf(demiurge.EINVALID, "kill group: invalid pid %d", pid)
	}
	if marker == "" {
		return demiurge.Errorf(demiurge.EINVALID, "kill group %d: an empty start marker cannot identify a process", pid)
	}
	// Pin the process first, then check its identity: from here on the
	// pidfd cannot refer to a newcomer.
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil && !errors.Is(err, unix.ENOSYS) {
		return demiurge.WrapError(demiurge.ENOTFOUND, err, "kill group %d: process not found", pid)
	}
	if err == nil {
		defer unix.Close(fd)
	}
	if cur, err := StartMarker(pid); err != nil || cur != marker {
		return demiurge.Errorf(demiurge.ENOTFOUND, "kill group %d: the process is no longer the recorded one (start marker differs); nothing signalled", pid)
	}
	buf := make([]byte, statBufSize)
	leader, ok := readProcStat(pid, buf)
	if !ok {
		return demiurge.Errorf(demiurge.ENOTFOUND, "kill group %d: process not found", pid)
	}
	tab := make(map[int]procEntry)
	// members lists the processes in the group or session of pid. While
	// the leader exists its ids cannot be reused; after it exited they
	// remain allocated as long as a member uses them, which the polling
	// below observes continuously (a reuse would need the whole pid space
	// to wrap within one poll interval).
	members := func() []procEntry {
		if scanProcs(tab, buf) != nil {
			return nil
		}
		var out []procEntry
		for _, e := range tab {
			if (e.pgrp == pid || e.sid == pid) && e.state != 'Z' && e.start >= leader.start {
				out = append(out, e)
			}
		}
		return out
	}
	send := func(sig syscall.Signal, list []procEntry) {
		if leader.pgrp == pid {
			_ = syscall.Kill(-pid, sig)
		}
		for _, e := range list {
			if e.pgrp != pid || sig == syscall.SIGKILL {
				signalExact(e.pid, e.start, sig, buf)
			}
		}
	}
	list := members()
	if len(list) == 0 {
		return nil // only a zombie left
	}
	send(syscall.SIGTERM, list)
	send(syscall.SIGCONT, list)
	grace := time.Now().Add(DefaultKillGrace)
	for time.Now().Before(grace) {
		time.Sleep(min(pollInterval, time.Until(grace)))
		if list = members(); len(list) == 0 {
			return nil
		}
	}
	deadline := time.Now().Add(killWait)
	for {
		send(syscall.SIGKILL, list)
		time.Sleep(pollInterval)
		if list = members(); len(list) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return demiurge.Errorf(demiurge.EINTERNAL, "kill group %d: %d processes still alive %s after SIGKILL", pid, len(list), killWait)
		}
	}
}
