package gitrepo

import (
	"errors"
	"io/fs"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/demiurge/demiurge"
)

// watchMask is every change to a directory's entries or its files' content
// and metadata, and the directory's own removal or move.
const watchMask = unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_CLOSE_WRITE | unix.IN_CREATE |
	unix.IN_DELETE | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_MOVED_FROM | unix.IN_MOVED_TO |
	unix.IN_ONLYDIR

// watchState is the inotify descriptor (valid while open), whether every
// watch was added (armed) and whether an event has been seen since.
type watchState struct {
	fd    int
	open  bool
	armed bool
	dirty bool
}

func (s *watchState) arm(roots []watchRoot) error {
	if err := s.close(); err != nil {
		return err
	}
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return demiurge.WrapError(demiurge.EUNAVAILABLE, err, "core repository: cannot watch the checkout")
	}
	s.fd, s.open = fd, true
	for _, r := range roots {
		if err := addWatches(fd, r); err != nil {
			_ = s.close()
			return err
		}
	}
	s.armed, s.dirty = true, false
	return nil
}

// addWatches watches r.dir and, when r.subdirs, every directory below it.
// A directory that vanishes meanwhile is a change: the caller scans anyway.
func addWatches(fd int, r watchRoot) error {
	add := func(dir string) error {
		if _, err := unix.InotifyAddWatch(fd, dir, watchMask); err != nil {
			return demiurge.WrapError(demiurge.EUNAVAILABLE, err, "core repository: cannot watch %s", dir)
		}
		return nil
	}
	if !r.subdirs {
		return add(r.dir)
	}
	return filepath.WalkDir(r.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return demiurge.WrapError(demiurge.EUNAVAILABLE, err, "core repository: cannot watch %s", path)
		}
		if !d.IsDir() {
			return nil
		}
		return add(path)
	})
}

func (s *watchState) quiet() bool {
	if !s.armed || s.dirty {
		return false
	}
	var buf [unix.SizeofInotifyEvent + unix.NAME_MAX + 1]byte
	n, err := unix.Read(s.fd, buf[:])
	if n <= 0 && errors.Is(err, unix.EAGAIN) {
		return true
	}
	// An event, an overflow or an error: not sure any more until re-armed.
	s.dirty = true
	return false
}

func (s *watchState) close() error {
	if !s.open {
		return nil
	}
	err := unix.Close(s.fd)
	s.open, s.armed, s.dirty = false, false, false
	if err != nil {
		return demiurge.WrapError(demiurge.EINTERNAL, err, "core repository: closing the checkout watch")
	}
	return nil
}
