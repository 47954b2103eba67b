package host

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/core"
	"github.com/demiurge/demiurge/corerepo"
	"github.com/demiurge/demiurge/process"
	"github.com/demiurge/demiurge/sandbox"
	"github.com/demiurge/demiurge/store"
)

// doctorSandbox builds a probe sandbox the way a terminal command gets
// one, and reports every kernel feature it lacks. A sandbox the operator
// turned off is reported, not a finding.
func doctorSandbox(h Home, cfg Config, getenv func(string) string, rep *DoctorReport) {
	prof := SandboxProfile(h, cfg, getenv)
	rep.Sandbox = sandbox.Probe(prof.Settings, prof.Policy(h.WorkspaceDir()))
	if rep.Sandbox.Working || rep.Sandbox.Mode == sandbox.ModeOff {
		rep.pass()
		return
	}
	for _, m := range rep.Sandbox.Missing {
		rep.failMsg("sandbox.missing_feature", "the terminal sandbox needs "+m, "use a kernel with it, or set sandbox.mode: off in "+h.ConfigPath()+" to run commands unsandboxed")
	}
	if len(rep.Sandbox.Missing) == 0 {
		rep.failMsg("sandbox.unavailable", rep.Sandbox.Error, "check the kernel's namespace and Landlock support, or set sandbox.mode: off in "+h.ConfigPath())
	}
}

// doctorDatabase opens the runtime database (which migrates it or refuses
// a newer one), reports its engine and schema version, lists the Hosts
// sharing it, and counts the active tasks.
func doctorDatabase(ctx context.Context, h Home, cfg Config, getenv func(string) string, rep *DoctorReport) {
	where, err := Database(h, cfg, getenv)
	if err != nil {
		rep.Database.Path = h.DBPath()
		rep.fail("database.config_invalid", err, "set "+DatabaseURLEnv+" or runtime.database in "+h.ConfigPath()+" to a postgres:// URL, or unset both")
		return
	}
	rep.Database.Path, rep.Database.Engine = DatabaseName(where), string(store.SQLite)
	if store.IsDatabaseURL(where) {
		rep.Database.Engine = string(store.Postgres)
	}
	db, err := store.Open(ctx, where, store.Options{ProcessAlive: process.Alive})
	if err != nil {
		rep.fail("database.open_failed", err, "check "+rep.Database.Path+" (a newer build may have migrated it)")
		return
	}
	defer db.Close()
	// Open migrates to the newest schema or refuses a newer one, so an
	// open database is at this build's version.
	rep.Database.OK, rep.Database.SchemaVersion = true, store.SchemaVersion()
	rep.pass()
	doctorHosts(ctx, db, time.Now(), rep)
	for _, status := range []string{demiurge.TaskQueued, demiurge.TaskRunning, demiurge.TaskBlocked} {
		tasks, err := db.ListTasks(ctx, demiurge.TaskFilter{Status: status, Limit: demiurge.MaxTaskLimit})
		if err != nil {
			rep.fail("database.query_failed", err, "check "+rep.Database.Path)
			return
		}
		rep.ActiveTasks += len(tasks)
	}
}

// doctorRepository opens the core repository and runs its consistency
// check.
func doctorRepository(ctx context.Context, h Home, rep *DoctorReport) {
	paths := corerepo.HomePaths(h.Dir)
	rep.Repository.Path = paths.GitDir
	repo, _, err := corerepo.Init(ctx, paths, corerepo.Options{}, "runtime home initialised")
	if err != nil {
		rep.fail("core.repository.open_failed", err, "see the message; `demiurge core check` shows the repository state")
		return
	}
	findings := repo.Check()
	for _, f := range findings {
		rep.failMsg(f.Code, f.Message, "run `demiurge core check --repair`")
	}
	rep.Repository.Consistent = len(findings) == 0
	if rep.Repository.Consistent {
		rep.pass()
	}
	rep.Repository.Live, _ = repo.Live()
	rep.Repository.Previous, _ = repo.Previous()
	if st, err := repo.Status(); err != nil {
		rep.fail("core.status_failed", err, "see the message")
	} else {
		rep.Repository.LocalEdits = len(st.Changes)
	}
}

// doctorCores loads every core of the agents tree and the global
// fallback, as a turn would (without saving local edits).
func doctorCores(h Home, rep *DoctorReport, getenv func(string) string) {
	if _, err := core.LoadGlobal(filepath.Join(h.AgentsDir(), "agent.yaml")); err != nil {
		rep.fail("core.global_invalid", err, "fix agents/agent.yaml or `demiurge core discard --yes`")
	} else {
		rep.pass()
	}
	entries, err := os.ReadDir(h.AgentsDir())
	if err != nil {
		rep.fail("core.agents_unreadable", err, "check "+h.AgentsDir())
		return
	}
	var ids []string
	for _, e := range entries {
		if e.IsDir() {
			if _, err := os.Stat(filepath.Join(h.CoreDir(e.Name()), "agent.yaml")); err == nil {
				ids = append(ids, e.Name())
			}
		}
	}
	slices.Sort(ids)
	found := false
	for _, id := range ids {
		found = found || id == rep.CoreID
		c := DoctorCore{CoreID: id}
		if loaded, err := core.Load(h.CoreDir(id)); err != nil {
			rep.fail("core.load_failed", err, "fix agents/"+id+" or `demiurge core discard --yes`")
		} else {
			c.OK = true
			rep.pass()
			doctorChannels(id, loaded, getenv, rep)
		}
		rep.Cores = append(rep.Cores, c)
	}
	if !found {
		rep.failMsg("core.missing", fmt.Sprintf("core %q has no agent.yaml under %s", rep.CoreID, h.AgentsDir()), "check --core and runtime.default_core")
	}
}

// doctorChannels checks every enabled channel of a core the way the gateway
// builds it (credentials present, addresses and callback URLs valid,
// the type supported), starting nothing.
func doctorChannels(coreID string, c *core.Core, getenv func(string) string, rep *DoctorReport) {
	for _, ch := range enabledChannels(c) {
		b := buildChannel(coreID, ch, channelEnv{getenv: getenv, logger: slog.New(slog.DiscardHandler)})
		b.close()
		if b.Err != nil {
			rep.failMsg("channel.invalid", fmt.Sprintf("channel %s of core %s cannot run: %s", ch.Name, coreID, demiurge.ErrorMessage(b.Err)),
				"fix channels."+ch.Name+" in agents/"+coreID+"/agent.yaml or set its credentials in the environment or .env")
			continue
		}
		rep.pass()
	}
}
