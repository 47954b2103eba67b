// Package sandbox confines the processes the Host starts for an agent
// (terminal commands, MCP stdio servers) with the operating system, so that
// what the command guard lets through, or an operator approves, still
// cannot reach the Host.
//
// # Contract
//
// A sandboxed process, and everything it starts, on Linux:
//
//   - sees none of the Host: it runs in new user, PID and mount namespaces
//     with a fresh /proc, so no Host pid, /proc/<host>/environ, memory or
//     file descriptor is reachable; its environment is exactly the one its
//     caller built;
//   - cannot see the hidden paths (the runtime home, other sessions' private
//     homes, the user's credential directories such as ~/.ssh, ~/.aws,
//     ~/.config, ~/.netrc, per-user runtime directories and container
//     engine sockets): each is covered by an empty read-only tmpfs, or
//     by /dev/null for a file, and the writable directories that lie inside
//     a hidden one (a workspace under the home) are bound back;
//   - can write only in its writable directories (the workspace and its
//     private HOME and TMPDIR) and a private /dev/shm: every other mount is
//     read-only (so chmod, chown, utime and truncate of outside files fail
//     too), and Landlock grants write access beneath the writable
//     directories only; it holds no capability, has no_new_privs set, and
//     cannot mount, unmount or ptrace outside its domain;
//   - dies with its command: the helper is PID 1 of the namespace, so when
//     the command exits, times out, is cancelled, or the Host dies (the
//     helper has SIGKILL as its parent-death signal), the kernel kills every
//     process in the namespace, double-forked daemons and setsid children
//     included;
//   - has no network at all, loopback included, when Policy.Network is
//     false (a new network namespace whose only interface is down);
//   - has its own session keyring, and resource limits (DefaultLimits: file
//     size, CPU time, processes); a command a limit's signal ended is
//     reported with the limit's name;
//   - under Policy.NoProcesses (the Python worker; never terminal
//     commands), cannot create a process at all: a seccomp filter refuses
//     fork, vfork, clone of anything but a thread (EPERM), clone3 (ENOSYS,
//     so the C library falls back to clone for threads), ptrace and
//     process_vm_writev, and every system call of another architecture's
//     table. RLIMIT_NPROC does not bind a Host running as root; the filter
//     binds every uid.
//
// # Mechanism
//
// There is no external binary: Wrap rewrites an *exec.Cmd to re-execute the
// Host's own binary (/proc/self/exe) with a sentinel argument. The init
// function of this package recognises the sentinel before main runs, reads
// its configuration from file descriptor 3, sets the namespaces up, starts
// the real command and reports on file descriptor 4: "ready", or
// "error <reason>" when the sandbox could not be built (the command then
// never runs: a sandbox that fails to start is never an unsandboxed run),
// and at the end how the command exited. Launch.Started waits for that
// report. Under Policy.NoProcesses the helper does not fork: it installs
// the filter on its thread and executes the command in its own place, so
// the command is the namespace's PID 1 (it can create no process to reap)
// and the helper's exit status is the command's. It says "exec" first; the
// status descriptor is close-on-exec, so it then closes empty, or carries
// "error <reason>" when the exec failed. A PID 1 has no default action for
// SIGTERM: such a command handles it to be stopped gently (the Python
// worker does), or it is killed after the grace.
//
// Probe tells which kernel features the sandbox needs are missing; a
// missing feature refuses every sandboxed start with one line naming it.
// Settings come from the operator's config.yaml only (sandbox.mode,
// sandbox.network); nothing in an Agent Core can loosen them.
//
// On other platforms Wrap and Probe report that the sandbox is unavailable.
package sandbox
