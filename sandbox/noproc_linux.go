package sandbox

import (
	"fmt"
	"os"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// seccomp_data offsets (linux/seccomp.h): nr, arch, then the arguments.
const (
	offNR   = 0
	offArch = 4
	offArg0 = 16 // the low word of args[0] on the little-endian architectures below
)

// bpf is one instruction of a program being assembled: jt and jf name
// labels ("" is the next instruction), resolved by assemble.
type bpf struct {
	code   uint16
	k      uint32
	jt, jf string
	label  string // the label of this instruction
}

func load(off uint32) bpf   { return bpf{code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, k: off} }
func ret(action uint32) bpf { return bpf{code: unix.BPF_RET | unix.BPF_K, k: action} }
func jeq(k uint32, jt, jf string) bpf {
	return bpf{code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, k: k, jt: jt, jf: jf}
}
func jge(k uint32, jt, jf string) bpf {
	return bpf{code: unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K, k: k, jt: jt, jf: jf}
}
func jset(k uint32, jt, jf string) bpf {
	return bpf{code: unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K, k: k, jt: jt, jf: jf}
}
func labelled(name string, b bpf) bpf { b.label = name; return b }

// assemble resolves the labels of prog into relative jumps (forward only,
// as classic BPF requires).
func assemble(prog []bpf) ([]unix.SockFilter, error) {
	at := map[string]int{}
	for i, b := range prog {
		if b.label != "" {
			at[b.label] = i
		}
	}
	out := make([]unix.SockFilter, len(prog))
	for i, b := range prog {
		off := func(label string) (uint8, error) {
			if label == "" {
				return 0, nil
			}
			j, ok := at[label]
			if !ok || j <= i || j-i-1 > 255 {
				return 0, fmt.Errorf("process filter: bad jump to %q", label)
			}
			return uint8(j - i - 1), nil
		}
		jt, err := off(b.jt)
		if err != nil {
			return nil, err
		}
		jf, err := off(b.jf)
		if err != nil {
			return nil, err
		}
		out[i] = unix.SockFilter{Code: b.code, Jt: jt, Jf: jf, K: b.k}
	}
	return out, nil
}

// processFilter is the seccomp program of Policy.NoProcesses. It refuses,
// with EPERM, every way to create a process: fork and vfork, clone without
// CLONE_THREAD (a thread stays allowed: the interpreter needs them), and
// clone3, whose flags live in memory a filter cannot read (ENOSYS, so the
// C library falls back to clone for its threads). ptrace and
// process_vm_writev are refused too, so the command cannot make another
// process of the sandbox (its helper) fork for it. A system call of another
// architecture's table (x32, i386 on x86-64) is refused whatever it is.
func processFilter() ([]unix.SockFilter, error) {
	a, ok := filterArch()
	if !ok {
		return nil, Unavailable("a process filter for " + runtime.GOARCH)
	}
	deny := unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	prog := []bpf{
		load(offArch),
		jeq(a.audit, "", "deny"),
		load(offNR),
	}
	if a.x32Bit != 0 {
		prog = append(prog, jge(a.x32Bit, "deny", ""))
	}
	prog = append(prog,
		jeq(a.clone3, "enosys", ""),
		jeq(a.clone, "clone", ""),
	)
	for _, nr := range a.denied {
		prog = append(prog, jeq(nr, "deny", ""))
	}
	prog = append(prog,
		ret(unix.SECCOMP_RET_ALLOW),
		labelled("clone", load(offArg0)),
		jset(unix.CLONE_THREAD, "allow", "deny"),
		labelled("allow", ret(unix.SECCOMP_RET_ALLOW)),
		labelled("deny", ret(deny)),
		labelled("enosys", ret(unix.SECCOMP_RET_ERRNO|uint32(unix.ENOSYS))),
	)
	return assemble(prog)
}

// archFilter describes the system call table the filter guards.
type archFilter struct {
	audit  uint32   // AUDIT_ARCH_* of the native table
	x32Bit uint32   // numbers at or above it belong to another ABI (0: none)
	clone  uint32   // SYS_CLONE
	clone3 uint32   // SYS_CLONE3
	denied []uint32 // refused outright: fork, vfork, ptrace, process_vm_writev
}

// execWithoutProcesses replaces the helper by the command under the
// process filter, installed on this thread (locked since the helper began)
// and inherited through the exec; the other threads end with it. The
// command becomes the namespace's PID 1, and its exit the helper's. The
// Host learns that the exec happened when the status descriptor, after
// "exec", closes empty; a failure follows on it instead. It never runs
// the command unfiltered.
func execWithoutProcesses(cfg helperConfig, status *os.File, fail func(string, ...any) int) int {
	prog, err := processFilter()
	if err != nil {
		return fail("%v", err)
	}
	if cfg.Dir != "" {
		if err := os.Chdir(cfg.Dir); err != nil {
			return fail("start %s: %v", cfg.Path, unwrapPathError(err))
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fail("no_new_privs: %v", err)
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog)), 0, 0); err != nil {
		return fail("process filter (seccomp): %v", err)
	}
	fmt.Fprintln(status, "exec")
	err = unix.Exec(cfg.Path, cfg.Argv, cfg.Env)
	return fail("start %s: %v", cfg.Path, err)
}
