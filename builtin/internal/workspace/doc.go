// Package workspace is the scope of one tool call on the file system: the
// turn's workspace directory, the Host's private paths no tool may touch,
// and the resolution of a path argument to a target, with the refusals
// the file tools and the terminal's cwd share.
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
package workspace
