package host_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/host"
	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/store"
	"github.com/demiurge/demiurge/turn"
)

// Two Hosts on two runtime homes that share one PostgreSQL ledger and
// nothing else (the process-level fleet tests are in internal/fleet).

// openShared opens n Hosts, each on a home of its own, on a new
// PostgreSQL ledger (skipped without demiurgetest.EnvPostgres), in UTC.
func openShared(t *testing.T, n int) []*host.Host {
	t.Helper()
	url := demiurgetest.PostgresDatabase(t)
	getenv := func(k string) string {
		if k == host.DatabaseURLEnv {
			return url
		}
		return ""
	}
	var hosts []*host.Host
	for range n {
		h, err := host.Open(context.Background(), host.Options{Home: t.TempDir(), Getenv: getenv, Timezone: "UTC"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { h.Close(context.Background()) })
		hosts = append(hosts, h)
	}
	return hosts
}

// Two Hosts running turns of one session at once take turns: the
// store-side session lease admits one turn at a time across Hosts, and
// every message lands once, in order.
func TestTwoHostsTakeTurnsOnOneSession(t *testing.T) {
	hosts := openShared(t, 2)
	ctx := context.Background()
	first, err := hosts[0].Run(ctx, turn.Request{Text: "open", NewSession: true, Channel: "test", ConversationKey: "test:shared"})
	if err != nil || first.Outcome != turn.OutcomeCompleted {
		t.Fatalf("first turn: %+v, %v", first, err)
	}
	const perHost = 8
	var wg sync.WaitGroup
	errs := make(chan error, 2*perHost)
	for i, h := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range perHost {
				res, err := h.Run(ctx, turn.Request{Text: fmt.Sprintf("h%d m%d", i, n), SessionID: first.SessionID,
					Channel: "test", ConversationKey: "test:shared"})
				if err != nil || res.Outcome != turn.OutcomeCompleted {
					errs <- fmt.Errorf("host %d turn %d: %+v, %v", i, n, res, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	msgs, err := hosts[1].Transcript(ctx, first.SessionID, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(msgs), 2*(2*perHost+1); got != want {
		t.Fatalf("%d messages, want %d", got, want)
	}
	for j := 0; j < len(msgs); j += 2 {
		u, a := msgs[j], msgs[j+1]
		if u.Role != "user" || a.Role != "assistant" || a.Content.Text != "[fake] "+u.Content.Text || u.TurnID != a.TurnID {
			t.Fatalf("pair %d is %s:%q / %s:%q: turns interleaved", j/2, u.Role, u.Content.Text, a.Role, a.Content.Text)
		}
	}
	assertTurnsSerialised(t, host.StoreOf(hosts[0]), 2*perHost+1)
	ran := map[string]bool{}
	turns, err := host.StoreOf(hosts[0]).Events(ctx, demiurge.EventFilter{Type: demiurge.EvTurnStarted, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range turns {
		ran[payloadOf(t, e)["host_id"].(string)] = true
	}
	if !ran[hosts[0].HostID()] || !ran[hosts[1].HostID()] {
		t.Fatalf("turns ran on %v, want both Hosts", ran)
	}
}

// A schedule due while two Hosts run fires once: both make their pass at
// the same moment, one claims the occurrence and runs it.
func TestScheduleDueOnTwoHostsFiresOnce(t *testing.T) {
	hosts := openShared(t, 2)
	ctx := context.Background()
	a, b := hosts[0], hosts[1]
	dir := filepath.Join(a.Home().Dir, "agents", "assistant", "agent", "schedules")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "hourly.yaml"), []byte("schedule: \"0 * * * *\"\nprompt: hourly check\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A's next turn saves the new schedule into the shared core; B's next
	// turn adopts it.
	for _, h := range hosts {
		if res, err := h.Run(ctx, turn.Request{Text: "sync"}); err != nil || res.Outcome != turn.OutcomeCompleted {
			t.Fatalf("turn: %+v, %v", res, err)
		}
	}
	if _, err := os.Stat(filepath.Join(b.Home().Dir, "agents", "assistant", "agent", "schedules", "hourly.yaml")); err != nil {
		t.Fatalf("host b has not the schedule: %v", err)
	}
	// Passes at chosen times in the past, both Hosts at once each time.
	// A claim compares with the ledger's clock, so each pass finds the
	// occurrence that follows its time already due: the first pass one
	// (the hour after before), the second the next.
	before := time.Now().UTC().Add(-3 * time.Hour).Truncate(time.Hour).Add(20 * time.Minute)
	for pass, at := range []time.Time{before, before.Truncate(time.Hour).Add(time.Hour + time.Second)} {
		fired := make([]int, 2)
		var wg sync.WaitGroup
		for i, h := range hosts {
			wg.Add(1)
			go func() {
				defer wg.Done()
				n, err := host.TickSchedules(h, ctx, at)
				if err != nil {
					t.Errorf("pass %d, host %d: %v", pass, i, err)
				}
				fired[i] = n
			}()
		}
		wg.Wait()
		if fired[0]+fired[1] != 1 {
			t.Fatalf("pass %d fired %v, want exactly one run in all", pass, fired)
		}
	}
	tasks, err := host.StoreOf(a).ListTasks(ctx, demiurge.TaskFilter{Kind: demiurge.TaskKindScheduleFire})
	if err != nil || len(tasks) != 2 || tasks[0].Status != demiurge.TaskSucceeded || tasks[1].Status != demiurge.TaskSucceeded {
		t.Fatalf("schedule runs %+v, %v; want two succeeded, one per occurrence", tasks, err)
	}
	occurrences, err := host.StoreOf(a).Query(ctx, store.Query{Table: "runtime_work_items", Where: map[string]any{"kind": demiurge.WorkKindScheduleFire}})
	if err != nil {
		t.Fatal(err)
	}
	succeeded := 0
	for _, o := range occurrences {
		if o["status"] == demiurge.WorkSucceeded {
			succeeded++
		}
	}
	if succeeded != 2 {
		t.Fatalf("occurrences %v: want two succeeded", occurrences)
	}
}

// The database lost for a while: a turn fails with a clear error and
// writes nothing; once the server is back the Host goes on by itself (its
// connections are replaced, its listener reconnects), and queued work runs.
func TestDatabaseLostForAWhile(t *testing.T) {
	base := demiurgetest.PostgresDatabase(t)
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	proxy := demiurgetest.NewTCPProxy(t, u.Host)
	u.Host = proxy.Addr()
	getenv := func(k string) string {
		if k == host.DatabaseURLEnv {
			return u.String()
		}
		return ""
	}
	ctx := context.Background()
	h, err := host.Open(ctx, host.Options{Home: t.TempDir(), Getenv: getenv})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	req := turn.Request{Text: "before", Channel: "test", ConversationKey: "test:outage"}
	first, err := h.Run(ctx, req)
	if err != nil || first.Outcome != turn.OutcomeCompleted {
		t.Fatalf("first turn: %+v, %v", first, err)
	}

	proxy.Cut()
	cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	lost, err := h.Run(cctx, turn.Request{Text: "during", SessionID: first.SessionID, Channel: "test", ConversationKey: "test:outage"})
	cancel()
	if err == nil && lost.Outcome == turn.OutcomeCompleted {
		t.Fatal("a turn completed without its database")
	}
	msg := fmt.Sprint(err)
	if lost.Error != nil {
		msg = lost.Error.Message
	}
	if !strings.Contains(msg, "runtime database") || strings.Contains(msg, "\n") {
		t.Fatalf("turn without a database: %q, want one line naming the runtime database", msg)
	}

	proxy.Restore()
	var after turn.Result
	deadline := time.Now().Add(30 * time.Second)
	for {
		after, err = h.Run(ctx, turn.Request{Text: "after", SessionID: first.SessionID, Channel: "test", ConversationKey: "test:outage"})
		if err == nil && after.Outcome == turn.OutcomeCompleted {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no turn within 30 s of the database's return: %+v, %v", after, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	msgs, err := h.Transcript(ctx, first.SessionID, 100)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, m := range msgs {
		texts = append(texts, m.Role+":"+m.Content.Text)
	}
	if want := []string{"user:before", "assistant:[fake] before", "user:after", "assistant:[fake] after"}; !slices.Equal(texts, want) {
		t.Fatalf("transcript %q, want %q: the failed turn left a half", texts, want)
	}
	tk, err := h.EnqueueTask(ctx, demiurge.TaskSpec{Kind: demiurge.TaskKindTerminalExec,
		Payload: map[string]any{"command": "true"}}, demiurge.TaskOrigin{Actor: "test"}, false)
	if err != nil {
		t.Fatalf("enqueue after the outage: %v", err)
	}
	waitTask(t, h, tk.ID, 30*time.Second)
}

// waitTask polls until task id of h has ended.
func waitTask(t *testing.T, h *host.Host, id string, within time.Duration) demiurge.Task {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		tk, err := host.StoreOf(h).Task(context.Background(), id)
		if err == nil && !demiurge.TaskActive(tk.Status) {
			return tk
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s still %s (%v) after %s", id, tk.Status, err, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
