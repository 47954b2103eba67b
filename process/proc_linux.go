package process

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// procEntry holds the fields of /proc/<pid>/stat the tree tracking needs.
type procEntry struct {
	pid, ppid, pgrp, sid int
	state                byte
	start                uint64 // field 22: clock ticks since boot
}

// procKey names one process: a pid together with its start time cannot
// name two processes within a boot.
type procKey struct {
	pid   int
	start uint64
}

func (e procEntry) key() procKey { return procKey{e.pid, e.start} }

// statBufSize holds any /proc/<pid>/stat line (comm is at most 16 bytes,
// the 50 numeric fields at most 20 digits each).
const statBufSize = 1536

// readProcStat reads /proc/<pid>/stat with raw system calls: scans read it
// for every process several times a second, and os.ReadFile's extra fstat
// and allocations dominate the cost. ok is false when the process does not
// exist (any more) or the line cannot be parsed.
func readProcStat(pid int, buf []byte) (procEntry, bool) {
	fd, err := syscall.Open("/proc/"+strconv.Itoa(pid)+"/stat", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return procEntry{}, false
	}
	n, err := readFull(fd, buf)
	syscall.Close(fd)
	if err != nil || n == 0 {
		return procEntry{}, false
	}
	e, ok := parseProcStat(buf[:n])
	e.pid = pid
	return e, ok
}

func readFull(fd int, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := syscall.Read(fd, buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return n, err
		}
		if m == 0 {
			break
		}
		n += m
	}
	return n, nil
}

// parseProcStat parses the fields after the comm field, found at the LAST
// ')' because comm may itself contain ") ".
func parseProcStat(b []byte) (procEntry, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return procEntry{}, false
	}
	b = b[i+2:]
	var e procEntry
	// Field 3 is the state; fields 4, 5, 6 ppid, pgrp, session; 22 the
	// start time. field counts from 3 at the state.
	field := 3
	for len(b) > 0 && field <= 22 {
		j := bytes.IndexByte(b, ' ')
		if j < 0 {
			j = len(b)
		}
		tok := bytes.TrimSpace(b[:j])
		switch field {
		case 3:
			if len(tok) != 1 {
				return procEntry{}, false
			}
			e.state = tok[0]
		case 4, 5, 6, 22:
			v, err := strconv.ParseInt(string(tok), 10, 64)
			if err != nil {
				return procEntry{}, false
			}
			switch field {
			case 4:
				e.ppid = int(v)
			case 5:
				e.pgrp = int(v)
			case 6:
				e.sid = int(v)
			case 22:
				e.start = uint64(v)
			}
		}
		field++
		if j == len(b) {
			b = nil
		} else {
			b = b[j+1:]
		}
	}
	return e, field > 22
}

// scanProcs fills tab with every process visible in /proc.
func scanProcs(tab map[int]procEntry, buf []byte) error {
	clear(tab)
	d, err := os.Open("/proc")
	if err != nil {
		return err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return err
	}
	for _, name := range names {
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		if e, ok := readProcStat(pid, buf); ok {
			tab[pid] = e
		}
	}
	return nil
}

// maxEnviron bounds how much of /proc/<pid>/environ is read.
const maxEnviron = 8 << 20

// environValue returns the value of name in the environment pid was
// executed with (/proc/<pid>/environ), "" when it is absent or unreadable
// (a zombie, another user's process).
func environValue(pid int, name string) string {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return ""
	}
	defer f.Close()
	b := make([]byte, 0, 16<<10)
	for len(b) < maxEnviron {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			break
		}
	}
	prefix := []byte(name + "=")
	for entry := range bytes.SplitSeq(b, []byte{0}) {
		if v, ok := bytes.CutPrefix(entry, prefix); ok {
			return string(v)
		}
	}
	return ""
}

// LeftInTree reports whether pid is still a process of the tree spawnID
// (Result.SpawnID): alive with its TreeEnv value, or an unreaped zombie
// child of the Host. What a caller that must prove a tree gone checks of
// each pid it knew (elsewhere than Linux: always false).
func LeftInTree(pid int, spawnID string) bool {
	e, ok := readProcStat(pid, make([]byte, statBufSize))
	if !ok {
		return false
	}
	if e.state == 'Z' {
		return e.ppid == os.Getpid()
	}
	return environValue(pid, TreeEnv) == spawnID
}

// TreeMember returns a live process whose environment carries spawnID as
// its TreeEnv value, 0 when there is none: how a caller that knows no pid
// of a tree (a sandboxed one prints its namespace's own) proves it gone
// (elsewhere than Linux: always 0).
func TreeMember(spawnID string) int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		if environValue(pid, TreeEnv) == spawnID && LeftInTree(pid, spawnID) {
			return pid
		}
	}
	return 0
}
