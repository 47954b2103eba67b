package controlplane_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/controlplane"
	"github.com/demiurge/demiurge/internal/demiurgetest"
)

func TestModelViewShape(t *testing.T) {
	cp, _ := newCP(t)
	ctx := context.Background()
	scope := demiurge.OperatorScope("")
	id := submit(t, cp, demiurge.TaskKindTerminalExec, demiurge.TaskOrigin{}).ID
	m, err := cp.ModelView(ctx, scope, id)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if got := strings.Join(keys, ","); got != "completed_at,kind,running,started_at,status,summary,task_id" {
		t.Fatalf("model keys %s", got)
	}
	if m["running"] != true || m["started_at"] != nil || m["completed_at"] != nil || m["summary"] != "" || m["task_id"] != id {
		t.Fatalf("queued model %v", m)
	}
	start(cp, id)
	long := strings.Repeat("é", 1000) // 2000 bytes
	if _, err := cp.Fail(ctx, id, long); err != nil {
		t.Fatal(err)
	}
	m, _ = cp.ModelView(ctx, scope, id)
	s := m["summary"].(string)
	if m["running"] != false || m["status"] != demiurge.TaskFailed || len(s) > controlplane.MaxSummaryChars ||
		!strings.HasSuffix(s, "...") || !strings.HasPrefix(s, "éé") || strings.ContainsRune(s, '\uFFFD') {
		t.Fatalf("failed model %v (summary %d bytes)", m, len(s))
	}
	if _, err := time.Parse(time.RFC3339Nano, m["completed_at"].(string)); err != nil {
		t.Fatalf("completed_at %v: %v", m["completed_at"], err)
	}
}

func TestOwnedReads(t *testing.T) {
	cp, _ := newCP(t)
	ctx := context.Background()
	mine := submit(t, cp, demiurge.TaskKindAgentSpawn, demiurge.TaskOrigin{SessionID: "session_a"}).ID
	theirs := submit(t, cp, demiurge.TaskKindAgentSpawn, demiurge.TaskOrigin{SessionID: "session_b"}).ID
	unowned := submit(t, cp, demiurge.TaskKindAgentSpawn, demiurge.TaskOrigin{}).ID
	conv := demiurge.PrincipalScope{PrincipalID: "principal:conv:1", Authority: demiurge.AuthorityConversation,
		Channel: "cli", ConversationKey: "k", SessionID: "session_a", AllowedSessionIDs: []string{"session_a"}}
	if tk, err := cp.Get(ctx, conv, mine); err != nil || tk.ID != mine {
		t.Fatalf("own task %v, %v", tk.ID, err)
	}
	for _, id := range []string{theirs, unowned, "task_missing"} {
		_, err := cp.Get(ctx, conv, id)
		wantCode(t, err, demiurge.ENOTFOUND, "task not found: "+id)
	}
	op := demiurge.OperatorScope("")
	for _, id := range []string{mine, theirs, unowned} {
		if _, err := cp.Get(ctx, op, id); err != nil {
			t.Fatalf("operator read %s: %v", id, err)
		}
	}
	_, err := cp.Get(ctx, op, "task_missing")
	wantCode(t, err, demiurge.ENOTFOUND, "task not found: task_missing")
	// A scope that fails validation reads nothing.
	bad := conv
	bad.Channel = ""
	_, err = cp.Get(ctx, bad, mine)
	wantCode(t, err, demiurge.EINVALID, "")
}

func TestLogLinesAndTail(t *testing.T) {
	cp, _ := newCP(t)
	ctx := context.Background()
	id := submit(t, cp, demiurge.TaskKindTerminalExec, demiurge.TaskOrigin{}).ID
	other := submit(t, cp, demiurge.TaskKindTerminalExec, demiurge.TaskOrigin{}).ID
	if err := cp.AppendLog(ctx, id, "", ""); err != nil { // one empty line
		t.Fatal(err)
	}
	for i := range 100 {
		if err := cp.AppendLog(ctx, id, fmt.Sprintf("a%d\r\nb%d\n", i, i), "stderr"); err != nil {
			t.Fatal(err)
		}
		cp.AppendLog(ctx, other, "interleaved", "")
	}
	v, err := cp.Operator(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Logs) != controlplane.TailLines || v.Logs[len(v.Logs)-1].Text != "b99" || v.Logs[0].Text != "a80" ||
		v.Logs[0].Stream != "stderr" {
		t.Fatalf("tail %d lines: first %+v last %+v", len(v.Logs), v.Logs[0], v.Logs[len(v.Logs)-1])
	}
	all, _ := cp.LogTail(ctx, id, 1000)
	if len(all) != 201 || all[0].Text != "" || all[0].Stream != "stdout" {
		t.Fatalf("full log %d lines, first %+v", len(all), all[0])
	}
	_, err = cp.Operator(ctx, "task_missing")
	wantCode(t, err, demiurge.ENOTFOUND, "task not found: task_missing")
	wantCode(t, cp.AppendLog(ctx, "task_missing", "x", ""), demiurge.ENOTFOUND, "task not found: task_missing")
}

// Retention: reads never return more than MaxLogLines, and always end with
// the newest line; the operator tail stays within TailChars.
func TestLogRetentionAndCharBound(t *testing.T) {
	db := demiurgetest.MustOpenDB(t)
	cp := controlplane.New(db, controlplane.Options{MaxLogLines: 5})
	ctx := context.Background()
	id := submit(t, cp, demiurge.TaskKindTerminalExec, demiurge.TaskOrigin{}).ID
	for i := range 12 {
		cp.AppendLog(ctx, id, fmt.Sprintf("line %d", i), "")
	}
	v, _ := cp.Operator(ctx, id)
	if len(v.Logs) != 5 || v.Logs[4].Text != "line 11" || v.Logs[0].Text != "line 7" {
		t.Fatalf("retained %+v", v.Logs)
	}
	cp = controlplane.New(db, controlplane.Options{})
	for range 3 {
		cp.AppendLog(ctx, id, strings.Repeat("x", 3000), "")
	}
	cp.AppendLog(ctx, id, strings.Repeat("y", 9000)+"END", "")
	v, _ = cp.Operator(ctx, id)
	last := v.Logs[len(v.Logs)-1].Text
	if len(v.Logs) != 1 || len(last) != controlplane.TailChars || !strings.HasPrefix(last, "...") || !strings.HasSuffix(last, "END") {
		t.Fatalf("char bound: %d lines, last %d bytes", len(v.Logs), len(last))
	}
	cp.AppendLog(ctx, id, "short", "")
	v, _ = cp.Operator(ctx, id)
	if n := len(v.Logs); n != 1 || v.Logs[0].Text != "short" {
		t.Fatalf("after short line: %d lines", n)
	}
}
