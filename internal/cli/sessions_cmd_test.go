package cli_test

import (
	"strings"
	"testing"
)

func TestSessionsListShowTurns(t *testing.T) {
	h := newHome(t)
	if r := h.ok("sessions", "list"); r.stdout != "(no sessions)\n" {
		t.Fatalf("empty list: %q", r.stdout)
	}
	var turn runJSON
	h.decode(0, &turn, "run", "--json", "first")
	h.ok("run", "second")

	r := h.ok("sessions", "list")
	if !strings.HasPrefix(r.stdout, "  SESSION") || !strings.Contains(r.stdout, turn.SessionID) {
		t.Fatalf("sessions list:\n%s", r.stdout)
	}
	var list []struct {
		SessionID    string `json:"session_id"`
		CoreID       string `json:"core_id"`
		MessageCount int    `json:"message_count"`
	}
	h.decode(0, &list, "sessions", "list", "--json")
	if len(list) != 1 || list[0].SessionID != turn.SessionID || list[0].CoreID != "assistant" || list[0].MessageCount != 4 {
		t.Fatalf("sessions list --json = %+v", list)
	}

	r = h.ok("sessions", "show", turn.SessionID)
	if !strings.HasPrefix(r.stdout, "session "+turn.SessionID+" · core assistant · 4 messages") || !strings.Contains(r.stdout, "\n[assistant] [fake] second\n") {
		t.Fatalf("sessions show:\n%s", r.stdout)
	}
	var show struct {
		SessionID string `json:"session_id"`
		Messages  []struct {
			Role string `json:"role"`
			Text string `json:"text"`
		} `json:"messages"`
	}
	h.decode(0, &show, "sessions", "show", turn.SessionID, "--json", "--limit", "1")
	if show.SessionID != turn.SessionID || len(show.Messages) != 1 || show.Messages[0].Text != "[fake] second" {
		t.Fatalf("sessions show --json --limit 1 = %+v", show)
	}

	var turns []struct {
		TurnID    string `json:"turn_id"`
		SessionID string `json:"session_id"`
		Status    string `json:"status"`
	}
	h.decode(0, &turns, "sessions", "turns", "--json")
	if len(turns) != 2 || turns[1].TurnID != turn.TurnID || turns[0].Status != "completed" {
		t.Fatalf("sessions turns --json = %+v", turns)
	}
	h.decode(0, &turns, "sessions", "turns", "--json", "--session", turn.SessionID, "--limit", "1")
	if len(turns) != 1 || turns[0].SessionID != turn.SessionID {
		t.Fatalf("sessions turns --session --limit 1 = %+v", turns)
	}
	if r := h.ok("sessions", "turns"); !strings.HasPrefix(r.stdout, "TURN") || !strings.Contains(r.stdout, turn.TurnID) {
		t.Fatalf("sessions turns:\n%s", r.stdout)
	}
}

func TestToolsList(t *testing.T) {
	h := newHome(t)
	r := h.ok("tools", "list")
	if !strings.HasPrefix(r.stdout, "NAME") || !strings.Contains(r.stdout, "\nread_file ") {
		t.Fatalf("tools list:\n%s", r.stdout)
	}
	var out struct {
		CoreID string `json:"core_id"`
		Tools  []struct {
			Name   string `json:"name"`
			Source string `json:"source"`
		} `json:"tools"`
	}
	h.decode(0, &out, "--core", "evolver", "tools", "list", "--json")
	if out.CoreID != "evolver" || len(out.Tools) == 0 {
		t.Fatalf("tools list --json = %+v", out)
	}
}

// A core without MCP servers lists none and checks none.
func TestMCPWithoutServers(t *testing.T) {
	h := newHome(t)
	for _, sub := range []string{"list", "check"} {
		if r := h.ok("mcp", sub); r.stdout != "No MCP servers declared.\n" {
			t.Errorf("mcp %s: %q", sub, r.stdout)
		}
		var st []any
		if h.decode(0, &st, "mcp", sub, "--json"); len(st) != 0 {
			t.Errorf("mcp %s --json = %v", sub, st)
		}
	}
}

// mcp list reads the declarations without connecting; check connects, and
// a server it cannot reach (here: refused by the Host's URL policy) exits
// 1, except with --json, which reports the states and exits 0.
func TestMCPListAndFailedCheck(t *testing.T) {
	h := newHome(t)
	h.ok("init")
	h.coreFile("assistant/agent/mcp/web.yaml", "transport: streamable_http\nurl: http://127.0.0.1:9/mcp\nconnect_timeout_seconds: 1\n")
	if r := h.ok("mcp", "list"); !strings.HasPrefix(r.stdout, "SERVER") || !strings.Contains(r.stdout, "web     streamable_http  not_connected") {
		t.Fatalf("mcp list:\n%s", r.stdout)
	}
	r := h.run("", "mcp", "check")
	if r.code != 1 || !strings.Contains(r.stdout, "denied") || !strings.Contains(r.stdout, "URL blocked by Host policy") || r.stderr != "" {
		t.Fatalf("mcp check: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	var st []struct {
		Server string `json:"server"`
		State  string `json:"state"`
	}
	if h.decode(0, &st, "mcp", "check", "--json"); len(st) != 1 || st[0].Server != "web" || st[0].State != "denied" {
		t.Fatalf("mcp check --json = %+v", st)
	}
}
