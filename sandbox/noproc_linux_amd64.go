package sandbox

import "golang.org/x/sys/unix"

func filterArch() (archFilter, bool) {
	return archFilter{
		audit:  unix.AUDIT_ARCH_X86_64,
		x32Bit: 0x40000000, // __X32_SYSCALL_BIT
		clone:  unix.SYS_CLONE,
		clone3: unix.SYS_CLONE3,
		denied: []uint32{unix.SYS_FORK, unix.SYS_VFORK, unix.SYS_PTRACE, unix.SYS_PROCESS_VM_WRITEV},
	}, true
}
