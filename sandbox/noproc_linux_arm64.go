package sandbox

import "golang.org/x/sys/unix"

// arm64 has no fork or vfork system calls: clone is the only way.
func filterArch() (archFilter, bool) {
	return archFilter{
		audit:  unix.AUDIT_ARCH_AARCH64,
		clone:  unix.SYS_CLONE,
		clone3: unix.SYS_CLONE3,
		denied: []uint32{unix.SYS_PTRACE, unix.SYS_PROCESS_VM_WRITEV},
	}, true
}
