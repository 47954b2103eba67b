package sessions

import (
	"context"
	"strings"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/builtin/internal/tool"
	"github.com/demiurge/demiurge/effect"
)

const (
	defaultSessionResults = 10
	maxSessionResults     = 50
	sessionMessageChars   = 800
	// sessionScanLimit is how many owned sessions a full-text search reads
	// (the original's 10,000, bounded by the store's list window).
	sessionScanLimit = demiurge.MaxSessionLimit
	// sessionWindow is how many of a session's newest messages are read.
	sessionWindow = demiurge.MaxMessageLimit
	// sessionReadCapability is required on top of the entry's capability.
	sessionReadCapability = "session.read"
)

func SessionSearch(d Deps) effect.Definition {
	return effect.Definition{
		Name:        "session_search",
		Description: "Search or browse the message history of your sessions. Without a query, lists sessions (or a session's latest messages).",
		Schema: tool.ObjectSchema(map[string]any{
			"query":      map[string]any{"type": "string", "description": "Case-insensitive text to find."},
			"session_id": map[string]any{"type": "string", "description": "Only this session."},
			"limit":      map[string]any{"type": "integer", "minimum": 1, "maximum": maxSessionResults, "default": defaultSessionResults},
		}),
		Source:            effect.SourceBuiltin,
		Risk:              "medium",
		Capability:        sessionReadCapability,
		ApprovalPolicy:    effect.ApprovalPrompt,
		ModelOutputPolicy: "current_turn",
		Adapter: tool.Simple(sessionArgs{}, nil, func(ctx context.Context, inv effect.Invocation, a sessionArgs) (effect.Outcome, error) {
			return runSessionSearch(ctx, inv, d, a)
		}),
	}
}

type sessionArgs struct {
	Query     string `json:"query"`
	SessionID string `json:"session_id"`
	Limit     int64  `json:"limit"`
}

// runSessionSearch reads only what the turn's principal scope owns: an
// explicit session must pass the owned lookup, and browse and full-text
// modes walk the owned session list. A session that is missing and one
// owned by someone else give the same answer.
func runSessionSearch(ctx context.Context, inv effect.Invocation, d Deps, a sessionArgs) (effect.Outcome, error) {
	if !inv.Turn.Grants.Can(sessionReadCapability, "") {
		return effect.Outcome{
			IsError: true, Denial: "capability",
			Content: "capability denied: " + sessionReadCapability + " for host",
		}, nil
	}
	if d.Sessions == nil {
		return tool.Unavailable("session_search", "no session runtime is configured"), nil
	}
	scope := inv.Turn.Scope
	if err := scope.Validate(); err != nil {
		return tool.Invalid("session_search requires a principal scope: %s", demiurge.ErrorMessage(err)), nil
	}
	query := strings.TrimSpace(a.Query)
	sessionID := strings.TrimSpace(a.SessionID)
	limit := int(tool.Positive(a.Limit, defaultSessionResults, maxSessionResults))
	needle := strings.ToLower(query)

	if sessionID != "" {
		if _, err := d.Sessions.Get(ctx, scope, sessionID); err != nil {
			return sessionError(ctx, err, sessionID)
		}
		msgs, err := d.Sessions.Transcript(ctx, sessionID, sessionWindow)
		if err != nil {
			return sessionError(ctx, err, sessionID)
		}
		var hits []demiurge.Message
		for _, m := range msgs {
			if searchable(m) && (query == "" || strings.Contains(strings.ToLower(m.Content.Text), needle)) {
				hits = append(hits, m)
			}
		}
		if len(hits) > limit { // the newest matches, still in transcript order
			hits = hits[len(hits)-limit:]
		}
		return sessionResults(hits)
	}

	if query == "" {
		sessions, err := d.Sessions.List(ctx, scope, "", limit)
		if err != nil {
			return effect.Outcome{}, err
		}
		list := make([]map[string]any, 0, len(sessions))
		for _, s := range sessions {
			list = append(list, map[string]any{
				"session_id": s.ID, "core_id": s.CoreID, "updated_at": demiurge.FormatTime(s.UpdatedAt),
				"title": s.Title, "preview": s.Preview, "message_count": s.MessageCount,
			})
		}
		payload := map[string]any{"sessions": list}
		content, err := tool.JSONText(payload)
		if err != nil {
			return effect.Outcome{}, err
		}
		return tool.Succeeded(content, payload), nil
	}

	sessions, err := d.Sessions.List(ctx, scope, "", sessionScanLimit)
	if err != nil {
		return effect.Outcome{}, err
	}
	var hits []demiurge.Message
	for _, s := range sessions {
		if err := ctx.Err(); err != nil {
			return effect.Outcome{}, err
		}
		msgs, err := d.Sessions.Transcript(ctx, s.ID, sessionWindow)
		if err != nil {
			if demiurge.ErrorCode(err) == demiurge.ENOTFOUND {
				continue // removed since it was listed
			}
			return effect.Outcome{}, err
		}
		for _, m := range msgs {
			if searchable(m) && strings.Contains(strings.ToLower(m.Content.Text), needle) {
				hits = append(hits, m)
				if len(hits) >= limit {
					return sessionResults(hits)
				}
			}
		}
	}
	return sessionResults(hits)
}

// searchable reports whether a message is part of the conversation as its
// participants saw it: a plain message shown to the user or the model.
// Internal records (hidden from both) are never returned.
func searchable(m demiurge.Message) bool {
	kind := m.Content.Kind
	return (kind == "" || kind == "message") && (m.Visible || m.Content.ModelVisible)
}

func sessionResults(msgs []demiurge.Message) (effect.Outcome, error) {
	results := make([]map[string]any, 0, len(msgs))
	for _, m := range msgs {
		results = append(results, map[string]any{
			"session_id": m.SessionID, "message_id": m.ID, "turn_id": m.TurnID, "role": m.Role,
			"created_at": demiurge.FormatTime(m.CreatedAt),
			"content":    tool.TruncateText(m.Content.Text, sessionMessageChars),
		})
	}
	payload := map[string]any{"results": results, "count": len(results)}
	content, err := tool.JSONText(payload)
	if err != nil {
		return effect.Outcome{}, err
	}
	return tool.Succeeded(content, payload), nil
}

// sessionError turns a failed owned read into the answer the model sees:
// not found (missing or not owned, never distinguished), or the failure.
func sessionError(ctx context.Context, err error, id string) (effect.Outcome, error) {
	if ctx.Err() != nil {
		return effect.Outcome{}, ctx.Err()
	}
	if demiurge.ErrorCode(err) == demiurge.ENOTFOUND {
		return tool.Invalid("session not found: %s", tool.FirstChars(id, 256)), nil
	}
	return effect.Outcome{}, err
}

// Deps is what session_search needs of the Host.
type Deps struct {
	// Sessions serves session_search. It must answer owned reads only:
	// Get and List see what the scope may see; Transcript is called only
	// with ids that Get or List returned. *session.Runtime implements it.
	Sessions Searcher
}

// Searcher is the owned read side of the session runtime that
// session_search uses. Missing and foreign sessions must give the same
// error (ENOTFOUND "session not found: <id>").
type Searcher interface {
	// Get returns session id if scope may see it.
	Get(ctx context.Context, scope demiurge.PrincipalScope, id string) (demiurge.Session, error)
	// List returns up to limit sessions visible to scope, newest first, of
	// coreID ("" for every core).
	List(ctx context.Context, scope demiurge.PrincipalScope, coreID string, limit int) ([]demiurge.Session, error)
	// Transcript returns the newest limit messages of a session in
	// chronological order.
	Transcript(ctx context.Context, sessionID string, limit int) ([]demiurge.Message, error)
}
