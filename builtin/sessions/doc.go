// Package sessions holds session_search: the owned message history of the
// turn's principal, by session or by text. It checks the session.read
// capability itself, whatever its entry's capability is.
package sessions
