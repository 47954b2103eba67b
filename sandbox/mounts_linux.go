package sandbox

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// hideOptions size the empty tmpfs laid over a hidden directory: it only
// ever holds the mount points of writable directories bound back inside.
const hideOptions = "size=64k,nr_inodes=256,mode=0755"

// setupMounts builds the helper's view of the file system, in its own
// mount namespace: nothing propagates back to the Host, /proc is fresh
// (only the namespace's processes), the hidden paths are covered, the
// writable directories bound back, /dev/shm is private, and every mount
// but the writable ones is read-only.
func setupMounts(cfg helperConfig) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("mount namespace: making / private: %v", err)
	}
	// The writable directories are opened before anything is hidden: a
	// workspace inside the runtime home is reachable only this way once
	// the home is covered.
	fds := map[string]int{}
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	for _, op := range cfg.Ops {
		if op.Kind != "bind" {
			continue
		}
		fd, err := unix.Open(op.Path, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("writable directory %s: %v", op.Path, err)
		}
		fds[op.Path] = fd
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mounting a fresh /proc: %v", err)
	}
	for _, op := range cfg.Ops {
		if err := applyOp(op, fds); err != nil {
			return err
		}
	}
	writable := cfg.bound()
	if isDir(privateShm) {
		if err := unix.Mount("tmpfs", privateShm, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "size=256m,mode=1777"); err != nil {
			return fmt.Errorf("private %s: %v", privateShm, err)
		}
		writable = append(writable, privateShm)
	}
	if err := unix.MountSetattr(-1, "/", unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
		return fmt.Errorf("read-only mounts (mount_setattr): %v", err)
	}
	for _, p := range writable {
		if err := unix.MountSetattr(-1, p, 0, &unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_RDONLY}); err != nil {
			return fmt.Errorf("writable directory %s: %v", p, err)
		}
	}
	return nil
}

// applyOp hides a path or binds a writable directory back. A hidden path
// that an outer hidden directory already covers is gone from this view and
// needs nothing more.
func applyOp(op mountOp, fds map[string]int) error {
	switch op.Kind {
	case "hide":
		info, err := os.Lstat(op.Path)
		if err != nil {
			return nil
		}
		if op.File || !info.IsDir() {
			if err := unix.Mount("/dev/null", op.Path, "", unix.MS_BIND, ""); err != nil {
				return fmt.Errorf("hiding %s: %v", op.Path, err)
			}
			return nil
		}
		if err := unix.Mount("tmpfs", op.Path, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, hideOptions); err != nil {
			return fmt.Errorf("hiding %s: %v", op.Path, err)
		}
	case "bind":
		if err := os.MkdirAll(op.Path, 0o755); err != nil {
			return fmt.Errorf("writable directory %s: mount point: %v", op.Path, err)
		}
		// Not recursive: a recursive bind would carry along the tmpfs
		// that hid this very path, and the directory would stay hidden.
		src := "/proc/self/fd/" + strconv.Itoa(fds[op.Path])
		if err := unix.Mount(src, op.Path, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("writable directory %s: bind: %v", op.Path, err)
		}
	default:
		return fmt.Errorf("unknown mount step %q", op.Kind)
	}
	return nil
}

func isDir(p string) bool {
	info, err := os.Stat(p)
	return err == nil && info.IsDir()
}
