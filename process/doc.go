// Package process owns the Host's operating-system processes: it runs
// commands as owned process trees, drains their output with bounded memory
// into tails and private artifacts with exact-value redaction, and ends
// them (timeout, cancellation, shutdown) without leaving a descendant alive
// or a zombie behind, and without ever signalling a process that merely
// reused a pid.
//
// It is an adapter: it imports only the root vocabulary, redact and the
// standard library (with golang.org/x/sys). The terminal tool, the
// background task worker and the MCP runtime (stdio servers) are its
// callers.
//
// # Identity
//
// A bare pid cannot say whether the process is still the one that was
// recorded, because pids are reused. A start marker can: on Linux it is
// "<boot_id>:<starttime>", where boot_id comes from
// /proc/sys/kernel/random/boot_id and starttime is field 22 of
// /proc/<pid>/stat (clock ticks since boot). StartMarker and Alive answer
// for any pid; KillGroupIfSame ends a recorded command's group and session
// after a Host restart only if the marker still matches.
//
// # Running commands
//
//	m, err := process.NewManager(process.ManagerOptions{ArtifactRoot: home + "/runtime/artifacts"})
//	defer m.Close(ctx)
//	res, err := m.Run(ctx, process.Spec{Argv: []string{"/bin/bash", "-c", cmd}, Env: env, Timeout: 30 * time.Second, SessionID: sid})
//	h, err := m.Start(ctx, spec) // background: h.Wait, h.Cancel
//
// Each command starts in a new session (hence its own process group, with
// no controlling terminal) with SIGKILL as its parent-death signal, from
// one OS thread the Manager keeps for its lifetime (the parent-death signal
// follows the forking thread). Argv[0] is resolved in the PATH of the
// command's own environment, which is complete: nothing is inherited from
// the Host except that the Manager adds TreeEnv=<spawn id>.
//
// # The tree
//
// NewManager makes the Host a child subreaper, so an orphaned descendant
// reparents to the Host rather than to init. A process belongs to a
// command's tree when its parent is in the tree, when its group or session
// is led by a process of the tree, or when it is an orphan adopted by the
// Host whose environment carries the command's TreeEnv value; the tree is
// re-read from /proc every 100 ms while the command runs and on every
// event. So `setsid sleep 1000 &`, a double fork and a daemon(3) that
// closed every descriptor are all found.
//
// A command ends when its own process exited and both pipes reached EOF.
// Whatever of its tree is then still alive is terminated: the tree dies
// with its command. Descendants that keep the pipes open after the command
// exited get a wait delay (2 s) to finish writing, then are terminated.
// Timeout, Cancel (single-flight: every caller gets the same Result), the
// context of Run and Manager.Close terminate the tree at once.
//
// Terminating means SIGTERM (and SIGCONT) to the group and to every member
// outside it, up to KillGrace (default 250 ms) for them to exit, then
// SIGKILL until nothing is left. The command's own process is not reaped
// until its tree is gone, so its pid, group and session ids cannot be
// reused while they may still be signalled; every other member is
// signalled through a pidfd after its start time was checked again.
//
// Reaping: the command's process is reaped by os/exec; the Manager reaps
// only orphans it attributed to a tree (zombies whose parent is the Host),
// never any other child of the Host, so no exit status is stolen from a
// Wait elsewhere.
//
// # Servers
//
//	srv, err := m.StartServer(ctx, process.ServerSpec{Argv: argv, Env: env, Stderr: sink, Sandbox: box})
//	// talk over srv.Stdin() and srv.Stdout(); <-srv.Exited() when it died
//	err = srv.Stop(ctx, grace)
//
// A server is a long-lived child started the same way (new session,
// parent-death signal, spawner thread, sandbox), whose stdin and stdout
// pipes the caller keeps; stderr is drained into the caller's bounded
// sink. Its environment is exactly ServerSpec.Env, without TreeEnv, so
// its tree is found by ancestry, group and session: at every stop and, as
// long as only servers run, on every tenth tracker tick (a scan of /proc
// costs milliseconds, which an idle server must not pay ten times a
// second for the Host's life); a sandboxed server needs no periodic scan,
// as its descendants cannot leave its PID namespace. When its process exits on its own the rest
// of its tree is terminated and reaped at once. Stop closes stdin, gives
// the server grace to exit, terminates what is left, reaps it and closes
// the pipes; Manager.Close stops every server without grace.
//
// # Output
//
// Both pipes are drained concurrently until EOF, so a command never blocks
// on a full pipe, also when it closes one stream early or when the
// artifact store fails. Everything read is first redacted (Spec.Redact,
// exact values, across read boundaries: the output is redact.ReplaceAll of
// the whole stream), then counted and kept as a tail of Spec.TailChars
// characters (invalid UTF-8 replaced byte by byte with U+FFFD), written to
// the artifact and passed to Spec.OnChunk. Memory per stream is the read
// buffer plus about 8·TailChars bytes, whatever the volume.
//
// Artifacts are <ArtifactRoot>/<hex sha256(SessionID)[:32]>/<spawn id>/
// {stdout,stderr}.log: directories 0700 and not links, files 0600 created
// exclusively without following links, written as the output arrives
// (small pieces are gathered, up to 4 KiB, and go to the file with the
// next larger one in one system call), written back to disk and synced
// while it grows (every 32 MiB, on a goroutine of the artifact's own that
// finish waits for) and fsynced at the end. Empty and failed files are
// removed without a sync; Stream.ArtifactPath names only complete ones.
// A storage failure is reported in Result.ArtifactErr (an *ArtifactError
// naming the kind of failure per stream, "stdout=ENOSPC") while the output
// keeps draining; Run lets the command finish, a background command is
// terminated.
//
// # Platforms
//
// Linux keeps every guarantee above. Elsewhere NewManager and
// KillGroupIfSame fail with EUNSUPPORTED; StartMarker does too, and Alive
// falls back to probing the pid alone (signal 0 on Unix, opening the
// process on Windows), which cannot tell a reused pid from the original,
// so callers there must also rely on a lease expiry; Alive errs towards
// "alive" when the platform cannot answer.
//
// # Concurrency
//
// Manager and Handle methods are safe for concurrent use. Each command is
// owned by one supervising goroutine (plus one per pipe and one waiting
// for its process), all of which the Manager waits for in Close; the
// Manager also owns the spawner thread and the tree tracker. OnChunk runs
// on a drain goroutine and must not block long.
//
// # Failure modes and limits
//
//   - A descendant that left the session, was orphaned and cleared or
//     overwrote its environment (env -i, some setproctitle) before the
//     tracker saw it escapes attribution; if it holds a pipe, the pipe is
//     closed under it after one second. Such an orphan that exits is left
//     a zombie of the Host until the Host exits.
//   - A process in uninterruptible sleep ignores SIGKILL until its I/O
//     completes; after 5 s the Result is returned with an EINTERNAL error
//     (the command's goroutines still wait for it).
//   - Becoming a subreaper is process-wide: orphans of processes the Host
//     started by other means also reparent to the Host; they are not
//     reaped here.
//   - After a Host restart, KillGroupIfSame finds the group and session of
//     the recorded process only; its setsid descendants cannot be
//     attributed from another process.
//   - A server's descendant that left its session and whose parent exited
//     before the next scan (up to a second) escapes attribution when the
//     server runs unsandboxed; a sandboxed server's whole tree dies with
//     its PID namespace.
package process
