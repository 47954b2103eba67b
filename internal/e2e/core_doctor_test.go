package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

type doctorOut struct {
	Home     string `json:"home"`
	CoreID   string `json:"core_id"`
	OK       bool   `json:"ok"`
	Database struct {
		OK            bool `json:"ok"`
		SchemaVersion int  `json:"schema_version"`
	} `json:"database"`
	Repository struct {
		Consistent bool   `json:"consistent"`
		Live       string `json:"live_revision"`
		Previous   string `json:"previous_revision"`
		LocalEdits int    `json:"local_edits"`
	} `json:"core_repository"`
	Cores []struct {
		CoreID string `json:"core_id"`
		OK     bool   `json:"ok"`
	} `json:"cores"`
	ActiveTasks int `json:"active_tasks"`
	Timezone    struct {
		Name   string `json:"name"`
		Source string `json:"source"`
	} `json:"timezone"`
	Counts struct {
		OK    int `json:"ok"`
		Error int `json:"error"`
	} `json:"counts"`
	Findings []struct {
		Severity    string `json:"severity"`
		Code        string `json:"code"`
		Message     string `json:"message"`
		Remediation string `json:"remediation"`
	} `json:"findings"`
}

func (e *env) doctor() (doctorOut, result) {
	e.t.Helper()
	r := e.run("", "doctor", "--json")
	var out doctorOut
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		e.t.Fatalf("doctor --json: exit %d stdout %q stderr %q: %v", r.code, r.stdout, r.stderr, err)
	}
	return out, r
}

func (d doctorOut) codes() []string {
	var c []string
	for _, f := range d.Findings {
		c = append(c, f.Code)
	}
	return c
}

func TestDoctorHealthyHome(t *testing.T) {
	e := newEnv(t)
	e.extra = []string{"DEMIURGE_TIMEZONE=Europe/Paris"}
	first, _ := e.runJSON("hello")
	d, r := e.doctor()
	if r.code != 0 || !d.OK || len(d.Findings) != 0 || d.Counts.Error != 0 || d.Counts.OK == 0 {
		t.Fatalf("doctor of a healthy home: exit %d %+v", r.code, d)
	}
	if !d.Database.OK || d.Database.SchemaVersion < 1 || !d.Repository.Consistent || d.Repository.Live != first.CoreRevision || d.Repository.LocalEdits != 0 {
		t.Fatalf("doctor sections %+v", d)
	}
	if d.CoreID != "assistant" || len(d.Cores) != 2 || !d.Cores[0].OK || !d.Cores[1].OK || d.ActiveTasks != 0 {
		t.Fatalf("doctor cores/tasks %+v", d)
	}
	if d.Timezone.Name != "Europe/Paris" || d.Timezone.Source != "env:DEMIURGE_TIMEZONE" {
		t.Fatalf("timezone %+v", d.Timezone)
	}
	// A pending local edit is not a problem: the next turn saves it.
	if err := os.WriteFile(e.soulPath(), []byte("# edited\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if d, r := e.doctor(); r.code != 0 || d.Repository.LocalEdits != 1 {
		t.Fatalf("doctor with a local edit: exit %d %+v", r.code, d)
	}
	text := e.run("", "doctor")
	for _, want := range []string{"home: " + e.home, "database: ok (schema version", "core repository: consistent", "live revision: " + first.CoreRevision, "local edits: 1", "active tasks: 0", "timezone: Europe/Paris"} {
		if !strings.Contains(text.stdout, want) {
			t.Errorf("doctor text lacks %q:\n%s", want, text.stdout)
		}
	}
}

func TestDoctorReportsAndCoreCheckRepairsInconsistency(t *testing.T) {
	e := newEnv(t)
	first, _ := e.runJSON("hello")
	// The checkout head says which revision the agents tree holds; without
	// it the tree cannot be trusted and every mutation is refused.
	if err := os.Remove(filepath.Join(e.home, "runtime", "core.git", "demiurge", "checkout")); err != nil {
		t.Fatal(err)
	}
	e.extra = []string{"DEMIURGE_TIMEZONE=Not/A_Zone"}
	d, r := e.doctor()
	if r.code != 1 || d.OK || d.Repository.Consistent || d.Counts.Error != 2 {
		t.Fatalf("doctor of a broken home: exit %d %+v", r.code, d)
	}
	if got := strings.Join(d.codes(), ","); got != "core.checkout_head_missing,timezone.invalid" {
		t.Fatalf("finding codes %s", got)
	}
	if f := d.Findings[0]; f.Severity != "error" || f.Remediation == "" || f.Message == "" {
		t.Fatalf("finding %+v", f)
	}
	e.extra = nil

	var check struct {
		Consistent bool `json:"consistent"`
		Repaired   bool `json:"repaired"`
		Findings   []struct{ Code, Message string }
	}
	if r := e.coreJSON(&check, "check"); r.code != 1 || check.Consistent || len(check.Findings) != 1 || check.Findings[0].Code != "core.checkout_head_missing" {
		t.Fatalf("core check: exit %d %+v", r.code, check)
	}
	r = e.run("", "core", "save")
	if r.code != 1 || !strings.Contains(r.stderr, "core repository consistency check failed: core.checkout_head_missing") {
		t.Fatalf("save on a broken repository: exit %d %s", r.code, r.stderr)
	}
	check.Findings = nil
	if r := e.coreJSON(&check, "check", "--repair"); r.code != 0 || !check.Consistent || !check.Repaired || len(check.Findings) != 0 {
		t.Fatalf("core check --repair: exit %d %+v %s", r.code, check, r.stderr)
	}
	if d, r := e.doctor(); r.code != 0 || !d.OK || d.Repository.Live != first.CoreRevision {
		t.Fatalf("doctor after repair: exit %d %+v", r.code, d)
	}
}

// TestCoreEvolvePromoteSIGKILL kills `core evolve promote` at growing
// random moments until one promotion completes. After every kill the live
// ref names the old or the new revision, doctor (whose open resolves an
// interrupted switch) finds the repository consistent, and the agents tree
// holds exactly the live revision.
func TestCoreEvolvePromoteSIGKILL(t *testing.T) {
	e := newEnv(t)
	const newSoul = "# Evolved under fire\n"
	start := e.evolveStart("big change", evolverWrite("assistant/agent/SOUL.md", newSoul), evolverReply("rewrote SOUL.md"))
	// A large proposal (written straight into the run tree, as the evolver
	// would) widens the window in which the switch rewrites the checkout.
	const files = 150
	lib := filepath.Join(start.AgentsRoot, "assistant", "agent", "lib")
	if err := os.MkdirAll(lib, 0o700); err != nil {
		t.Fatal(err)
	}
	line := strings.Repeat("abcdefghijklmnopqrstuvwxyz0123456789", 4) + "\n"
	for i := range files {
		body := fmt.Sprintf("file %d\n%s", i, strings.Repeat(line, 110))
		if err := os.WriteFile(filepath.Join(lib, fmt.Sprintf("part%03d.txt", i)), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var rv evolveReviewOut
	if r := e.coreJSON(&rv, "evolve", "review", start.RunID); r.code != 0 || !rv.Passed || rv.ProposalRevision == nil {
		t.Fatalf("review: exit %d %+v %s", r.code, rv, r.stderr)
	}
	// Promote reviews the run again before it switches: a second review
	// (nothing new to commit) by the binary takes about as long as a
	// promote's start and review, so kills are aimed around its duration.
	began := time.Now()
	r := e.exec("", "core", "evolve", "review", start.RunID, "--json")
	window := time.Since(began)
	if r.code != 0 {
		t.Fatalf("second review: exit %d %s", r.code, r.stderr)
	}
	if err := json.Unmarshal([]byte(r.stdout), &rv); err != nil {
		t.Fatalf("second review: %v: %s", err, r.stdout)
	}
	oldLive, newLive := rv.BaseRevision, *rv.ProposalRevision
	oldSoul := coreRead(t, e.soulPath())
	liveRef := filepath.Join(e.home, "runtime", "core.git", "refs", "demiurge", "live")
	journal := filepath.Join(e.home, "runtime", "core.git", "demiurge", "txn.json")

	delay := window/4 + time.Duration(rand.Int64N(int64(window/2)))
	for attempt := 1; ; attempt++ {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		c := e.cmd(ctx, "", "core", "evolve", "promote", start.RunID)
		if err := c.Start(); err != nil {
			cancel()
			t.Fatal(err)
		}
		time.Sleep(delay)
		_ = c.Process.Signal(syscall.SIGKILL)
		err := c.Wait()
		cancel()
		killed := err != nil
		_, inTxn := os.Stat(journal)
		raw, rerr := os.ReadFile(liveRef)
		if rerr != nil {
			t.Fatalf("attempt %d: live ref: %v", attempt, rerr)
		}
		live := strings.TrimSpace(string(raw))
		t.Logf("attempt %d: delay %v killed=%v journal=%v live=%s", attempt, delay, killed, inTxn == nil, live[:12])
		if live != oldLive && live != newLive {
			t.Fatalf("attempt %d: live ref %s is neither old %s nor new %s", attempt, live, oldLive, newLive)
		}

		d, r := e.doctor()
		if r.code != 0 || !d.Repository.Consistent || len(d.Findings) != 0 {
			t.Fatalf("attempt %d: doctor after SIGKILL: exit %d %+v", attempt, r.code, d)
		}
		if _, err := os.Stat(journal); !os.IsNotExist(err) {
			t.Fatalf("attempt %d: journal left after doctor opened the repository: %v", attempt, err)
		}
		if d.Repository.Live != live || d.Repository.LocalEdits != 0 {
			t.Fatalf("attempt %d: doctor live %s (ref said %s), local edits %d", attempt, d.Repository.Live, live, d.Repository.LocalEdits)
		}
		if live == oldLive {
			if got := coreRead(t, e.soulPath()); got != oldSoul {
				t.Fatalf("attempt %d: live is old but SOUL.md is %q", attempt, got)
			}
			if _, err := os.Stat(filepath.Join(e.home, "agents", "assistant", "agent", "lib")); !os.IsNotExist(err) {
				t.Fatalf("attempt %d: live is old but the proposal's files are in the tree: %v", attempt, err)
			}
			if attempt >= 12 {
				t.Fatalf("no promotion completed after %d attempts (last delay %v)", attempt, delay)
			}
			delay += window/4 + time.Duration(rand.Int64N(int64(window/4)))
			continue
		}
		if got := coreRead(t, e.soulPath()); got != newSoul {
			t.Fatalf("live is new but SOUL.md is %q", got)
		}
		if got := coreRead(t, filepath.Join(e.home, "agents", "assistant", "agent", "lib", fmt.Sprintf("part%03d.txt", files-1))); !strings.HasPrefix(got, fmt.Sprintf("file %d\n", files-1)) {
			t.Fatalf("last proposal file %q", got[:20])
		}
		if d.Repository.Previous != oldLive {
			t.Fatalf("previous %s, want %s", d.Repository.Previous, oldLive)
		}
		return
	}
}
