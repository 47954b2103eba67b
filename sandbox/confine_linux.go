package sandbox

import (
	"fmt"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// minLandlockABI is the oldest Landlock the sandbox accepts: ABI 3 is the
// first to control truncate(2), without which a command could empty any
// file it can name.
const minLandlockABI = 3

// deviceFiles are the character devices every command may write.
var deviceFiles = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"}

// landlockConfig handles every file-system right this kernel knows (so an
// unlisted path is neither writable nor, beyond reading, usable) and the
// IPC scopes (no signal to, and no abstract Unix socket of, a process
// outside the sandbox). TCP is left to the network namespace.
func landlockConfig() landlock.Config {
	return landlock.Config{HandledAccessFS: landlock.V8.HandledAccessFS, Scoped: landlock.V6.Scoped}.BestEffort()
}

// confine applies, to the calling (locked) thread, everything the command
// inherits: Landlock, no_new_privs and an empty capability set.
func confine(cfg helperConfig) error {
	abi, err := llsys.LandlockGetABIVersion()
	if err != nil || abi < minLandlockABI {
		return Unavailable(fmt.Sprintf("Landlock ABI %d or newer (found %d)", minLandlockABI, abi))
	}
	writable := append(cfg.bound(), privateShm)
	fd, flags, err := landlockConfig().NewRulesetFD(
		landlock.RODirs("/"),
		landlock.RWDirs(writable...).IgnoreIfMissing(),
		landlock.RWFiles(deviceFiles...).WithIoctlDev().IgnoreIfMissing(),
	)
	if err != nil {
		return fmt.Errorf("landlock ruleset: %v", err)
	}
	defer unix.Close(fd)
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %v", err)
	}
	if err := llsys.LandlockRestrictSelf(fd, flags); err != nil {
		return fmt.Errorf("landlock restrict: %v", err)
	}
	// A session keyring of its own: the Host's keys stay the Host's.
	// (a nil name makes it anonymous: it cannot be joined by name.)
	if _, _, errno := unix.Syscall(unix.SYS_KEYCTL, unix.KEYCTL_JOIN_SESSION_KEYRING, 0, 0); errno != 0 && errno != unix.ENOSYS {
		return fmt.Errorf("session keyring: %v", errno)
	}
	return dropCapabilities()
}

// dropCapabilities empties the bounding and ambient sets of this thread,
// so the command, root of its user namespace, holds no capability after
// its execve.
func dropCapabilities() error {
	_ = unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
	for c := 0; c <= unix.CAP_LAST_CAP; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && err != unix.EINVAL {
			return fmt.Errorf("dropping capability %d: %v", c, err)
		}
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("clearing capabilities: %v", err)
	}
	return nil
}
