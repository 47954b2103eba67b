package slash

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/demiurge/demiurge"
)

// noTurns is the answer of the trace commands in a session without turns
// (spec surfaces §2.11, exact).
const noTurns = "no turns yet"

// defaultEvents is how many events /events shows unless told.
const defaultEvents = 10

// cmdLast shows the session's latest turn: its status and timing, what
// the user asked and what was answered, and its tool calls.
func cmdLast(ctx context.Context, env Env, args string) (Outcome, error) {
	if err := noArgs("last", args); err != nil {
		return Outcome{}, err
	}
	tr, ok, err := latestTurn(ctx, env)
	if err != nil || !ok {
		return notice(noTurns), err
	}
	h := env.Host()
	evs, err := h.TurnEvents(ctx, tr.ID)
	if err != nil {
		return Outcome{}, err
	}
	calls, err := h.ToolCalls(ctx, tr.ID)
	if err != nil {
		return Outcome{}, err
	}
	var b strings.Builder
	b.WriteString("## Last turn " + tr.ID + "\n\n")
	b.WriteString("- status: " + string(tr.Status) + "\n")
	b.WriteString("- started: " + clock(tr.CreatedAt))
	if !tr.CompletedAt.IsZero() {
		b.WriteString(" · took " + tr.CompletedAt.Sub(tr.CreatedAt).Round(time.Millisecond).String())
	}
	b.WriteString("\n- core: " + tr.CoreID + "@" + short(tr.CoreRevision) + "\n")
	if msg, _ := tr.Error["message"].(string); msg != "" {
		b.WriteString("- error: " + escapeInline(oneLine(msg)) + "\n")
	}
	for _, e := range evs {
		if e.Type != demiurge.EvMessagePersisted {
			continue
		}
		p, err := demiurge.DecodePayload[demiurge.MessagePersistedPayload](e)
		if err != nil || p.Content == nil || strings.TrimSpace(p.Content.Text) == "" || (p.Visible != nil && !*p.Visible) {
			continue
		}
		role := "reply"
		if p.Role == "" || p.Role == demiurge.RoleUser {
			role = "you"
		}
		b.WriteString("\n**" + role + ":** " + escapeInline(shorten(p.Content.Text, 400, "...")) + "\n")
	}
	if len(calls) > 0 {
		t := table{title: "Tool calls", headers: []string{"#", "tool", "status", "arguments", "result"}}
		for i, c := range calls {
			t.rows = append(t.rows, []string{strconv.Itoa(i + 1), c.ToolName, c.Status, compactJSON(c.Args), resultText(c.Result)})
		}
		b.WriteString("\n" + t.String())
	}
	return notice(strings.TrimRight(b.String(), "\n")), nil
}

// cmdTrace is the table of one turn's events: the named turn's when it
// is a turn of this session, else (no argument, "last", an unknown id or
// another session's turn) quietly the latest turn's, as the spec has it.
func cmdTrace(ctx context.Context, env Env, args string) (Outcome, error) {
	if strings.Contains(args, " ") {
		return Outcome{}, usageBecause("trace", "takes one turn id at most")
	}
	var tr demiurge.Turn
	found := false
	if args != "" && args != "last" {
		named, err := env.Host().Turn(ctx, args)
		switch {
		case errNotFound(err):
		case err != nil:
			return Outcome{}, err
		case named.SessionID == env.SessionID():
			tr, found = named, true
		}
	}
	if !found {
		latest, ok, err := latestTurn(ctx, env)
		if err != nil || !ok {
			return notice(noTurns), err
		}
		tr = latest
	}
	evs, err := env.Host().TurnEvents(ctx, tr.ID)
	if err != nil {
		return Outcome{}, err
	}
	t := table{title: "Trace " + tr.ID, headers: []string{"time", "type", "detail"}}
	for _, e := range evs {
		t.rows = append(t.rows, []string{stamp(e.CreatedAt), e.Type, eventDetail(e)})
	}
	return notice(t.String()), nil
}

// cmdEvents is the table of the session's newest events: "/events
// [type] [limit]", a first argument of digits being the limit.
func cmdEvents(ctx context.Context, env Env, args string) (Outcome, error) {
	typ, limit, err := eventsArgs(args)
	if err != nil {
		return Outcome{}, err
	}
	if env.SessionID() == "" {
		return notice("No events yet: the session starts with the next message."), nil
	}
	evs, err := env.Host().SessionEvents(ctx, env.SessionID(), typ, limit)
	if errNotFound(err) {
		return notice("No events yet: the session starts with the next message."), nil
	}
	if err != nil {
		return Outcome{}, err
	}
	if len(evs) == 0 {
		if typ != "" {
			return notice("No " + typ + " events in this session."), nil
		}
		return notice("No events in this session."), nil
	}
	t := table{title: "Events", headers: []string{"time", "type", "turn", "detail"}}
	for _, e := range evs {
		t.rows = append(t.rows, []string{stamp(e.CreatedAt), e.Type, eventTurn(e), eventDetail(e)})
	}
	return notice(t.String()), nil
}

// eventsArgs reads "[type] [limit]".
func eventsArgs(args string) (typ string, limit int, err error) {
	fields := strings.Fields(args)
	limit = defaultEvents
	number := func(s string) (int, error) {
		n, err := strconv.Atoi(s)
		if err != nil || !allDigits(s) || n < 1 || n > demiurge.MaxEventLimit {
			return 0, usageBecause("events", "the limit is a number from 1 to "+strconv.Itoa(demiurge.MaxEventLimit))
		}
		return n, nil
	}
	switch {
	case len(fields) == 0:
	case len(fields) == 1 && allDigits(fields[0]):
		limit, err = number(fields[0])
	case len(fields) == 1:
		typ = fields[0]
	case len(fields) == 2:
		typ = fields[0]
		limit, err = number(fields[1])
	default:
		err = usage("events")
	}
	return typ, limit, err
}

// latestTurn is the session's newest turn; ok is false before its first.
func latestTurn(ctx context.Context, env Env) (demiurge.Turn, bool, error) {
	if env.SessionID() == "" {
		return demiurge.Turn{}, false, nil
	}
	turns, err := env.Host().ListTurns(ctx, "", env.SessionID(), 1)
	switch {
	case errNotFound(err):
		return demiurge.Turn{}, false, nil
	case err != nil:
		return demiurge.Turn{}, false, err
	case len(turns) == 0:
		return demiurge.Turn{}, false, nil
	}
	return turns[0], true, nil
}

// stamp is an event time as the trace tables show it.
func stamp(t time.Time) string { return t.Local().Format("15:04:05.000") }
