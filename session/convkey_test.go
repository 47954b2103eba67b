package session_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/session"
)

func TestConversationKey(t *testing.T) {
	tests := []struct {
		name    string
		channel string
		scope   string
		ids     []string
		thread  string
		want    string
		wantErr string
	}{
		{name: "dm", channel: "telegram", scope: "dm", ids: []string{"123"}, want: "telegram:dm:123"},
		{name: "thread", channel: "slack", scope: "channel", ids: []string{"T1", "C1"}, thread: "123.4", want: "slack:channel:T1:C1:thread:123.4"},
		{name: "encoded", channel: "matrix", scope: "room", ids: []string{"!room:example"}, want: "matrix:room:%21room%3Aexample"},
		{name: "no safe chars", channel: "web", scope: "user", ids: []string{"a/b c:d"}, want: "web:user:a%2Fb%20c%3Ad"},
		{name: "unreserved kept", channel: "web", scope: "user", ids: []string{"A-z_0.9~"}, want: "web:user:A-z_0.9~"},
		{name: "utf8 bytes", channel: "web", scope: "user", ids: []string{"é"}, want: "web:user:%C3%A9"},
		{name: "percent encoded", channel: "web", scope: "user", ids: []string{"50%"}, want: "web:user:50%25"},
		{name: "thread encoded", channel: "web", scope: "user", ids: []string{"1"}, thread: "a:b", want: "web:user:1:thread:a%3Ab"},
		{name: "empty thread ignored", channel: "cli", scope: "operator", ids: []string{"local"}, thread: "", want: "cli:operator:local"},
		{name: "identifier digits", channel: "c2_x", scope: "s_1", ids: []string{"x"}, want: "c2_x:s_1:x"},
		{name: "upper channel", channel: "Telegram", scope: "dm", ids: []string{"1"}, wantErr: "conversation key channel must be a lowercase identifier"},
		{name: "digit first channel", channel: "1tg", scope: "dm", ids: []string{"1"}, wantErr: "conversation key channel must be a lowercase identifier"},
		{name: "dash channel", channel: "tele-gram", scope: "dm", ids: []string{"1"}, wantErr: "conversation key channel must be a lowercase identifier"},
		{name: "empty channel", channel: "", scope: "dm", ids: []string{"1"}, wantErr: "conversation key channel must be a lowercase identifier"},
		{name: "colon scope", channel: "telegram", scope: "d:m", ids: []string{"1"}, wantErr: "conversation key scope must be a lowercase identifier"},
		{name: "empty scope", channel: "telegram", scope: "", ids: []string{"1"}, wantErr: "conversation key scope must be a lowercase identifier"},
		{name: "no ids", channel: "telegram", scope: "dm", ids: nil, wantErr: "conversation key requires at least one id"},
		{name: "empty id", channel: "telegram", scope: "dm", ids: []string{"1", ""}, wantErr: "conversation key id must not be empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := session.ConversationKey(tt.channel, tt.scope, tt.ids, tt.thread)
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("ConversationKey=%q, want error %q", got, tt.wantErr)
				}
				if got, want := err.Error(), tt.wantErr; got != want {
					t.Fatalf("error=%q, want %q", got, want)
				}
				if got, want := demiurge.ErrorCode(err), demiurge.EINVALID; got != want {
					t.Fatalf("code=%q, want %q", got, want)
				}
				return
			}
			if err != nil {
				t.Fatalf("ConversationKey: %v", err)
			}
			if got != tt.want {
				t.Fatalf("ConversationKey=%q, want %q", got, tt.want)
			}
		})
	}
}

func TestCLIConversationKey(t *testing.T) {
	c := session.CLIConversationKey("assistant")
	if got, want := c, (session.Conversation{CoreID: "assistant", Channel: "cli", Key: "cli:operator:local"}); got != want {
		t.Fatalf("CLIConversationKey=%+v, want %+v", got, want)
	}
	built, err := session.ConversationKey("cli", "operator", []string{"local"}, "")
	if err != nil || built != c.Key {
		t.Fatalf("built CLI key=%q (%v), want %q", built, err, c.Key)
	}
}

func TestDefaultConversationKey(t *testing.T) {
	got, err := session.DefaultConversationKey("telegram", "user:42")
	if err != nil {
		t.Fatal(err)
	}
	if want := "telegram:principal:user%3A42"; got != want {
		t.Fatalf("DefaultConversationKey=%q, want %q", got, want)
	}
}

// FuzzConversationKey checks the structural promise of a key: it splits on
// ':' into exactly channel, scope, the ids (and thread), and each part
// decodes back to its input.
func FuzzConversationKey(f *testing.F) {
	f.Add("telegram", "dm", "123", "", uint8(1), "")
	f.Add("slack", "channel", "T1", "C1", uint8(2), "123.4")
	f.Add("matrix", "room", "!room:example", "", uint8(1), "")
	f.Fuzz(func(t *testing.T, channel, scope, id1, id2 string, n uint8, thread string) {
		ids := []string{id1, id2}[:n%3]
		key, err := session.ConversationKey(channel, scope, ids, thread)
		if err != nil {
			if demiurge.ErrorCode(err) != demiurge.EINVALID {
				t.Fatalf("error code=%q, want invalid (%v)", demiurge.ErrorCode(err), err)
			}
			return
		}
		parts := strings.Split(key, ":")
		want := 2 + len(ids)
		if thread != "" {
			want += 2
		}
		if len(parts) != want {
			t.Fatalf("key %q has %d parts, want %d", key, len(parts), want)
		}
		if parts[0] != channel || parts[1] != scope {
			t.Fatalf("key %q does not start with %s:%s", key, channel, scope)
		}
		for i, id := range ids {
			if id == "" {
				t.Fatalf("empty id accepted: %q", key)
			}
			dec, err := url.PathUnescape(parts[2+i])
			if err != nil || dec != id {
				t.Fatalf("id %d of %q decodes to %q (%v), want %q", i, key, dec, err, id)
			}
		}
		if thread != "" {
			if parts[len(parts)-2] != "thread" {
				t.Fatalf("key %q lacks the thread marker", key)
			}
			if dec, err := url.PathUnescape(parts[len(parts)-1]); err != nil || dec != thread {
				t.Fatalf("thread of %q decodes to %q (%v), want %q", key, dec, err, thread)
			}
		}
		for _, c := range key {
			if c == ' ' || c == '/' || c > 0x7e {
				t.Fatalf("key %q carries an unencoded %q", key, c)
			}
		}
	})
}

func TestScopes(t *testing.T) {
	conv, err := session.ConversationScope("telegram", "user:42", "telegram:dm:42", "session_x")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := conv.PrincipalID, "principal:conversation:telegram:user%3A42"; got != want {
		t.Fatalf("conversation principal=%q, want %q", got, want)
	}
	if err := conv.Validate(); err != nil {
		t.Fatalf("conversation scope invalid: %v", err)
	}
	if !conv.Allows("session_x") || len(conv.AllowedSessionIDs) != 1 {
		t.Fatalf("conversation scope allowed=%v, want [session_x]", conv.AllowedSessionIDs)
	}

	sched, err := session.SchedulerScope("assistant", "daily", "schedule_run_1", "")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := sched.PrincipalID, "principal:scheduler:assistant:daily:schedule_run_1"; got != want {
		t.Fatalf("scheduler principal=%q, want %q", got, want)
	}
	if got, want := sched.Authority, demiurge.AuthoritySystem; got != want {
		t.Fatalf("scheduler authority=%q, want %q", got, want)
	}
	if err := sched.Validate(); err != nil {
		t.Fatalf("scheduler scope invalid: %v", err)
	}

	child, err := session.DelegatedAgentScope(conv, "turn_1", "task_1", "session_child")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := child.PrincipalID, "principal:delegated_agent:principal%3Aconversation%3Atelegram%3Auser%253A42:task_1"; got != want {
		t.Fatalf("delegated principal=%q, want %q", got, want)
	}
	if child.OriginSessionID != "session_x" || child.OriginTurnID != "turn_1" || child.Channel != "" {
		t.Fatalf("delegated scope=%+v: want origin session_x/turn_1 and no route", child)
	}
	if child.Allows("session_x") || !child.Allows("session_child") {
		t.Fatalf("delegated scope allowed=%v, want only the child session", child.AllowedSessionIDs)
	}
	if err := child.Validate(); err != nil {
		t.Fatalf("delegated scope invalid: %v", err)
	}

	bad := []struct {
		name string
		err  error
	}{
		{"conversation without key", second(session.ConversationScope("telegram", "u", "", ""))},
		{"conversation without principal", second(session.ConversationScope("telegram", "", "k", ""))},
		{"conversation bad channel", second(session.ConversationScope("Tel", "u", "k", ""))},
		{"scheduler without run", second(session.SchedulerScope("a", "b", "", ""))},
		{"delegated without origin", second(session.DelegatedAgentScope(session.ForSession(conv, ""), "turn", "task", ""))},
		{"delegated without task", second(session.DelegatedAgentScope(conv, "turn", "", ""))},
	}
	for _, b := range bad {
		if got, want := demiurge.ErrorCode(b.err), demiurge.EINVALID; got != want {
			t.Errorf("%s: code=%q (%v), want %q", b.name, got, b.err, want)
		}
	}
}

func second[T any](_ T, err error) error { return err }
