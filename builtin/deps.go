package builtin

import (
	"context"

	"github.com/demiurge/demiurge"
)

// Deps is what the builtin tools need of the Host. The composition root
// fills it once; Definitions copies it into every adapter it builds. A nil
// field leaves the tools that need it registered but answering that they are
// not available, so a misconfigured Host fails closed rather than acting
// without its checks.
type Deps struct {
	// Home is the runtime home. todo keeps its per-session state under
	// <Home>/runtime/session-state/<sha256(session id)>/todo.json.
	Home string

	// Sessions serves session_search. It must answer owned reads only:
	// Get and List see what the scope may see; Transcript is called only
	// with ids that Get or List returned. *session.Runtime implements it.
	Sessions SessionSearcher

	// CoreDir returns the directory of a core, SkillsDir its skills root
	// (slots.skills or <surface>/skills; it may not exist yet). The skills
	// root must lie inside the core directory.
	CoreDir   func(coreID string) string
	SkillsDir func(coreID string) string

	// CoreLoader loads the core in dir and reports why it does not load.
	// skill_manage calls it after every change and rolls the change back
	// when it fails. Without it skill_manage refuses to change anything.
	CoreLoader func(dir string) error

	// ProtectedNames are file names (compared case-insensitively) that
	// write_file and patch refuse to write anywhere in the workspace, with
	// "write blocked for protected file: <name>".
	ProtectedNames []string
}

// SessionSearcher is the owned read side of the session runtime that
// session_search uses. Missing and foreign sessions must give the same
// error (ENOTFOUND "session not found: <id>").
type SessionSearcher interface {
	// Get returns session id if scope may see it.
	Get(ctx context.Context, scope demiurge.PrincipalScope, id string) (demiurge.Session, error)
	// List returns up to limit sessions visible to scope, newest first, of
	// coreID ("" for every core).
	List(ctx context.Context, scope demiurge.PrincipalScope, coreID string, limit int) ([]demiurge.Session, error)
	// Transcript returns the newest limit messages of a session in
	// chronological order.
	Transcript(ctx context.Context, sessionID string, limit int) ([]demiurge.Message, error)
}
