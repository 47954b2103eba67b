// Package todo holds todo, the per-session list for multi-step work.
//
// # Runtime state
//
// todo keeps one list per session in
// <Deps.Home>/runtime/session-state/<sha256(session id)>/todo.json, private
// to the Host (directories 0700, file 0600, no symbolic link accepted on
// the way), written atomically. The session id is hashed so that no id can
// name a path.
package todo
