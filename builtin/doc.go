// Package builtin holds the Host's builtin tools as effect.Definitions:
// tools_list and clarify, the workspace file tools (read_file, write_file,
// patch, search_files), the skill tools (skills_list, skill_view,
// skill_manage), todo, session_search and terminal. Definitions(toolsets, deps)
// returns the tools of the selected toolsets in toolset order,
// de-duplicated, each bound to deps; a toolset member this build does not
// provide is left out of the catalog (a call to it answers "tool not found
// or not allowed").
//
// # Contract
//
// The dispatcher (package effect) validates arguments against each tool's
// schema and checks capability and approval before a call runs; the
// schemas are therefore closed and exact (additionalProperties false,
// required, types, enums, maxima), and each tool decodes its arguments
// once, in Prepare, into a typed struct that follows its schema. Prepare
// makes the tool's pure checks (the ones before approval below) and
// returns the call that carries their results to the approval question
// and to Run; a call whose facts can change while the operator decides
// (a path's links, the terminal's cwd) checks them again after approval.
// A problem the model should see (bad arguments, a missing file, a
// refused path) is an error outcome, never a Go error; a refusal made
// before any side effect has ExecutionStarted false. A Go error means the
// Host itself failed (a store error) or the call was cancelled.
//
// Registry metadata follows spec tool-runtime §1.2. session_search also
// checks the session.read capability itself, whatever its entry's
// capability is, and answers with the capability denial when it is
// missing.
//
// # Workspace scope
//
// The file tools act inside the turn's workspace (spec tool-runtime §10).
// A path argument is taken relative to the workspace ("~" is the user's
// home; a "~" that cannot be expanded is refused) and resolved the way the
// kernel would, symbolic links followed as far as the path exists.
//
// Writes (write_file, patch, and the terminal's cwd) must stay inside: a
// result outside is refused with "path escapes workspace: <path>", a
// sensitive path (§10.2: .git, .env*, .ssh, .aws, .kube, .venv,
// .demiurge, credential files, private keys, pyproject.toml, uv.lock)
// with "sensitive path denied: <path>", a name in Deps.ProtectedNames with
// "write blocked for protected file: <name>".
//
// Reads (read_file, search_files) follow the original (§1.3, §4.3): a read
// inside the workspace of a path that is not sensitive keeps the entry's
// policy (auto); a read outside the workspace (named by its absolute
// path), of a sensitive path, or a search with include_sensitive over a
// sensitive file (among the first 500 entries, or a larger tree) is never
// automatic: the operator is asked at risk high, with the path and the
// reason in the question ("Read file /home/u/note.txt (outside the
// workspace)"), and a session grant covers that path only. An outside
// search walks only below its own root.
//
// Stricter than the original, and not approvable at all: the paths the
// sandbox hides from agent processes (Deps.Sandbox.Hidden: the runtime
// home, its private sibling with the terminal homes, the Host's
// configuration and key) and Deps.Home itself are refused for every
// operation with "path is private to the Host: <path>", by the sandbox's
// own rule (the deeper of a hidden path and the workspace wins, the
// workspace a tie), so the file tools and the terminal see the same
// tree. A link loop is refused with "path cannot be resolved: …". These
// refusals are policy denials (Outcome.Denial "policy", data.reason
// workspace_escape, host_private, symlink_loop, sensitive_path or
// protected_file) and nothing is read or written.
//
// All I/O goes through an os.Root: at the workspace, or for a read outside
// it at the target's own directory, so a link swapped in after resolution
// cannot lead anywhere else. Writes are atomic (a hidden temporary file in
// the same directory, synced, renamed over the target): a failed write
// leaves the previous content. An existing file keeps its mode; new files
// are 0644 and new directories 0755, since they are the user's files.
//
// # Argument errors
//
// Where the spec names the sentence a tool answers bad arguments with
// ("unsupported context_mode: shared", "task_id is required",
// "unsupported search target: lines", …), the model sees that sentence
// even when the argument schema refused the call first: the adapters
// implement effect.ArgumentMessenger with the tool's own first checks
// (delegate_task with delegation.ArgumentError).
//
// # Bounded reads
//
// read_file streams the file through one 64 KiB buffer: it decodes up to
// the end of its window (at most 20,000 characters), then counts what it
// leaves out only if at most 1 MiB remains; otherwise the note names the
// remaining bytes and the next offset, and data has total_bytes but no
// total_chars. search_files walks the tree lazily in sorted path order,
// skips sensitive directories (unless include_sensitive), the Host's
// private paths and links that leave its scope, reads at most 200,000
// characters of each file as text (NUL bytes included, as the original
// does: the spec skips no binary files), stops at max_results (≤ 200)
// matches, and stops after 100,000 directory entries, saying so. Memory
// does not grow with file size.
//
// # Skills
//
// skills_list and skill_view read the skills index of the core directory
// (Deps.CoreDir) through core.Load. skill_manage changes the skills root
// (Deps.SkillsDir, inside the core) transactionally: it applies the
// change, calls Deps.CoreLoader, and when the core no longer loads undoes
// the change exactly (replaced files come back as the same inode, new files
// and directories are removed) and answers "skill <action> rolled back
// because core load failed: <error>".
//
// # Runtime state
//
// todo keeps one list per session in
// <Deps.Home>/runtime/session-state/<sha256(session id)>/todo.json, private
// to the Host (directories 0700, file 0600, no symbolic link accepted on
// the way), written atomically. The session id is hashed so that no id can
// name a path.
//
// # Terminal
//
// terminal runs one foreground shell command (bash -c, else /bin/sh -c)
// through Deps.Processes, in a cwd inside the workspace. Before approval
// it checks, in this order and without side effects: secret_bindings
// shape and the exact grant secret.bind:<NAME> of each (a wildcard never
// grants a secret), the command, the cwd (workspace scope as for writes),
// the env overlay names, background (refused: "background terminal
// commands are not available yet"), then the command guard (cmdguard): a
// block is a policy denial that never reaches the operator. A command the
// guard allows, without overlay or bindings, keeps the entry's folded
// policy; anything else is at least prompt, and a call with an overlay or
// bindings is one-shot (never answered by, nor stored as, a session
// grant).
//
// After approval the command gets the allowlisted Host variables only
// (PATH, LANG, LC_ALL, LC_CTYPE, TERM, COLORTERM, TZ and the Windows
// system names), HOME = Deps.PrivateHome(session) (created 0700) and
// TMPDIR, TMP, TEMP inside it, then the overlay, then the bound secrets,
// read through Deps.Getenv only now. A binding's expiry counts from the
// pre-approval check, so a late answer does not lengthen it, and the
// earliest expiry clamps the timeout. Bound values are replaced by
// <redacted:TARGET> in tails and artifacts and join the turn's secret set.
// The result is "exit_code: N" with the bounded tails (spec tool-runtime
// §7.7); a timeout reports exit code 124 and "timed_out: true". A nonzero
// exit is an error with ExecutionStarted true; data carries the audit view
// (names of environment variables, never values).
//
// # Concurrency
//
// Adapters are safe for concurrent use. Within one process, skill_manage
// calls on one core are serialised, and so are todo updates of one
// session; nothing coordinates separate Host processes, whose turns of one
// session the store's admission lease already serialises.
package builtin
