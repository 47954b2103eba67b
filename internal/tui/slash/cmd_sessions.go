package slash

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/turn"
)

// pickerSessions is how many sessions /resume offers and numbers.
const pickerSessions = 20

// cmdSessions lists the newest sessions of the core (digits only; default
// 20), the current one marked "*".
func cmdSessions(ctx context.Context, env Env, args string) (Outcome, error) {
	limit := pickerSessions
	if args != "" {
		n, err := strconv.Atoi(args)
		if err != nil || n < 1 || !allDigits(args) {
			return Outcome{}, usageBecause("sessions", "the limit is a number of sessions, at least 1")
		}
		limit = min(n, demiurge.MaxSessionLimit)
	}
	list, err := env.Host().ListSessions(ctx, env.CoreID(), limit)
	if err != nil {
		return Outcome{}, err
	}
	if len(list) == 0 {
		return notice("No sessions of core " + env.CoreID() + " yet."), nil
	}
	t := table{title: "Sessions", headers: []string{"#", "", "session_id", "updated", "channel", "messages", "preview"}}
	for i, s := range list {
		mark := ""
		if s.ID == env.SessionID() {
			mark = "*"
		}
		t.rows = append(t.rows, []string{strconv.Itoa(i + 1), mark, s.ID, clock(s.UpdatedAt), s.Channel, strconv.Itoa(s.MessageCount), s.Preview})
	}
	return notice(t.String()), nil
}

// cmdResume opens the resume picker, or resumes the session named by id
// or by its number in that list (/sessions' numbers).
func cmdResume(ctx context.Context, env Env, args string) (Outcome, error) {
	if err := idle(env, "resume"); err != nil {
		return Outcome{}, err
	}
	h := env.Host()
	if args == "" {
		list, err := h.ListSessions(ctx, env.CoreID(), pickerSessions)
		if err != nil {
			return Outcome{}, err
		}
		if len(list) == 0 {
			return notice("No sessions of core " + env.CoreID() + " to resume."), nil
		}
		p := &Picker{Title: "Resume session", OnPick: func(ctx context.Context, id string) (Outcome, error) {
			if err := idle(env, "resume"); err != nil {
				return Outcome{}, err
			}
			return resume(ctx, env, id)
		}}
		for _, s := range list {
			title := orText(s.Title, s.ID)
			if s.ID == env.SessionID() {
				title += " (current)"
			}
			p.Items = append(p.Items, Item{ID: s.ID, Title: title, Preview: s.Preview, Time: s.UpdatedAt})
		}
		return Outcome{Picker: p}, nil
	}
	ref := unwrap(args)
	switch {
	case ref == "":
		return Outcome{}, demiurge.Errorf(demiurge.EINVALID, "session id is required")
	case allDigits(ref):
		n, _ := strconv.Atoi(ref)
		list, err := h.ListSessions(ctx, env.CoreID(), pickerSessions)
		if err != nil {
			return Outcome{}, err
		}
		if n < 1 || n > len(list) {
			return Outcome{}, demiurge.Errorf(demiurge.EINVALID, "Session number out of range: %s", ref)
		}
		ref = list[n-1].ID
	}
	return resume(ctx, env, ref)
}

// resume checks that the session exists and is of this UI's core, then
// asks the UI to switch to it.
func resume(ctx context.Context, env Env, id string) (Outcome, error) {
	s, err := env.Host().Session(ctx, id)
	if errNotFound(err) {
		return Outcome{}, demiurge.Errorf(demiurge.ENOTFOUND, "session not found or not authorized")
	}
	if err != nil {
		return Outcome{}, err
	}
	if s.CoreID != env.CoreID() {
		return Outcome{}, demiurge.Errorf(demiurge.EINVALID, "session %s belongs to core %s; this UI talks to core %s", s.ID, s.CoreID, env.CoreID())
	}
	return Outcome{Notice: "resumed session: " + s.ID, Action: ActionResume, SessionID: s.ID}, nil
}

// cmdNew names a fresh session; the UI's next message starts it.
func cmdNew(_ context.Context, env Env, args string) (Outcome, error) {
	if err := noArgs("new", args); err != nil {
		return Outcome{}, err
	}
	if err := idle(env, "new"); err != nil {
		return Outcome{}, err
	}
	id := demiurge.NewID("session")
	return Outcome{Notice: "new session: " + id, Action: ActionNewSession, SessionID: id}, nil
}

// cmdCompact summarises the session's older history with its own model
// (args: what to focus on); its newest turns stay as they are.
func cmdCompact(ctx context.Context, env Env, args string) (Outcome, error) {
	if err := idle(env, "compact"); err != nil {
		return Outcome{}, err
	}
	id := env.SessionID()
	if id == "" {
		return warning("No session yet: send a message first; there is nothing to compact."), nil
	}
	res, err := env.Host().CompactSession(ctx, turn.CompactRequest{
		SessionID: id, Focus: strings.TrimSpace(args), Provider: env.Provider(), Model: env.Model(),
	})
	if errNotFound(err) {
		return warning("No session " + id + " yet: send a message first; there is nothing to compact."), nil
	}
	if err != nil {
		return Outcome{}, err
	}
	if res.Skipped {
		return Outcome{Notice: "Nothing compacted: " + res.Reason + "."}, nil
	}
	return Outcome{Notice: fmt.Sprintf("Compacted %d older messages into one summary (%d summarising request(s)); the newest %d turns are kept as they are.",
		res.Compacted, res.Chunks, turn.DefaultProtectTurns)}, nil
}

// idle refuses a session switch while a turn runs: the turn belongs to the
// session it would leave.
func idle(env Env, name string) error {
	if env.Busy() {
		return demiurge.Errorf(demiurge.ECONFLICT, "/%s: a turn is running; /interrupt or /stop it first", name)
	}
	return nil
}

// unwrap strips wrapping pairs of ` ' " < > [ ] from a session reference,
// as many as there are.
func unwrap(s string) string {
	pairs := map[byte]byte{'`': '`', '\'': '\'', '"': '"', '<': '>', '[': ']'}
	for {
		s = strings.TrimSpace(s)
		if len(s) < 2 || pairs[s[0]] == 0 || s[len(s)-1] != pairs[s[0]] {
			return s
		}
		s = s[1 : len(s)-1]
	}
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// clock is a time as the tables show it: local, to the second.
func clock(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04:05")
}
