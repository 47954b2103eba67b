package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/core"
	"github.com/demiurge/demiurge/corerepo"
	"github.com/demiurge/demiurge/host"
	"github.com/demiurge/demiurge/process"
	"github.com/demiurge/demiurge/sandbox"
	"github.com/demiurge/demiurge/schedule"
	"github.com/demiurge/demiurge/store"
)

// newDoctorCmd is `demiurge doctor`, the operator's health report of a
// runtime home: configuration, database, core repository, cores, tasks and
// timezone. Each part is checked on its own, so one broken part does not
// hide the others, and without the whole Host (no lease, no
// reconciliation, no workers). Exit 0 healthy, 1 any finding, 2 the report
// could not be made (the home cannot be resolved or created).
func newDoctorCmd(g *globals, streams IO) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the runtime home: database, core repository, cores, tasks, timezone",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rep, err := diagnose(cmd.Context(), g)
			if err != nil {
				if asJSON {
					_ = writeJSON(streams.Out, doctorFailure{Home: g.home, OK: false,
						Error: &errorOutput{Code: "doctor.execution_error", Message: demiurge.ErrorMessage(err)}})
				}
				return &exitError{code: ExitUsage, err: err}
			}
			if asJSON {
				if err := writeJSON(streams.Out, rep); err != nil {
					return err
				}
			} else {
				printDoctor(streams, rep)
			}
			if !rep.OK {
				return failed()
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// doctorReport is `demiurge doctor --json`.
type doctorReport struct {
	Home       string         `json:"home"`
	CoreID     string         `json:"core_id"`
	OK         bool           `json:"ok"`
	Database   doctorDatabase `json:"database"`
	Repository doctorRepo     `json:"core_repository"`
	Cores      []doctorCore   `json:"cores"`
	// ActiveTasks counts queued, running and blocked tasks of every Host
	// sharing the home (tasks of a Host that died are counted until a Host
	// opening the home reconciles them).
	ActiveTasks int             `json:"active_tasks"`
	Timezone    doctorTimezone  `json:"timezone"`
	Sandbox     sandbox.Report  `json:"sandbox"`
	Counts      doctorCounts    `json:"counts"`
	Findings    []doctorFinding `json:"findings"`
}

type doctorDatabase struct {
	Path          string `json:"path"`
	OK            bool   `json:"ok"`
	SchemaVersion int    `json:"schema_version"`
}

type doctorRepo struct {
	Path       string `json:"path"`
	Consistent bool   `json:"consistent"`
	Live       string `json:"live_revision"`
	Previous   string `json:"previous_revision"`
	LocalEdits int    `json:"local_edits"`
}

type doctorCore struct {
	CoreID string `json:"core_id"`
	OK     bool   `json:"ok"`
}

type doctorTimezone struct {
	Name   string `json:"name"`
	Source string `json:"source"`
}

type doctorCounts struct {
	OK      int `json:"ok"`
	Warning int `json:"warning"`
	Error   int `json:"error"`
}

type doctorFinding struct {
	Severity    string `json:"severity"`
	Code        string `json:"code"`
	Message     string `json:"message"`
	Remediation string `json:"remediation"`
}

type doctorFailure struct {
	Home  string       `json:"home"`
	OK    bool         `json:"ok"`
	Error *errorOutput `json:"error"`
}

// pass counts a check that found nothing; fail and failMsg record a
// finding (every finding is an error: doctor exits 1 on any).
func (r *doctorReport) pass() { r.Counts.OK++ }

func (r *doctorReport) fail(code string, err error, remediation string) {
	r.failMsg(code, demiurge.ErrorMessage(err), remediation)
}

func (r *doctorReport) failMsg(code, msg, remediation string) {
	r.Counts.Error++
	r.Findings = append(r.Findings, doctorFinding{Severity: "error", Code: code, Message: oneLine(msg), Remediation: remediation})
}

// diagnose builds the report. It fails only when the home itself cannot be
// resolved or created; every other problem is a finding.
func diagnose(ctx context.Context, g *globals) (*doctorReport, error) {
	dir, err := initHome(g)
	if err != nil {
		return nil, err
	}
	h := host.Home{Dir: dir}
	rep := &doctorReport{Home: dir, Cores: []doctorCore{}, Findings: []doctorFinding{}}

	cfg, err := host.LoadConfig(h.ConfigPath())
	if err != nil {
		rep.fail("config.invalid", err, "fix "+h.ConfigPath())
	} else {
		rep.pass()
	}
	rep.CoreID = coreOr(g.core, cfg.Runtime.DefaultCore)
	if rep.CoreID == "" {
		rep.CoreID = "assistant"
	}
	diagnoseDatabase(ctx, h, rep)
	diagnoseRepository(ctx, h, rep)
	diagnoseCores(h, rep)
	if tz, err := schedule.ResolveTimezone("", os.Getenv(schedule.TimezoneEnv), cfg.Runtime.Timezone); err != nil {
		rep.fail("timezone.invalid", err, "set runtime.timezone in config.yaml or "+schedule.TimezoneEnv+" to an IANA zone name")
	} else {
		rep.Timezone = doctorTimezone{Name: tz.Name, Source: tz.Source}
		rep.pass()
	}
	diagnoseSandbox(h, cfg, rep)
	rep.OK = rep.Counts.Error == 0
	return rep, nil
}

// diagnoseSandbox builds a probe sandbox the way a terminal command gets
// one, and reports every kernel feature it lacks. A sandbox the operator
// turned off is reported, not a finding.
func diagnoseSandbox(h host.Home, cfg host.Config, rep *doctorReport) {
	prof := host.SandboxProfile(h, cfg, os.Getenv)
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

func diagnoseDatabase(ctx context.Context, h host.Home, rep *doctorReport) {
	rep.Database.Path = h.DBPath()
	db, err := store.Open(ctx, h.DBPath(), store.Options{ProcessAlive: process.Alive})
	if err != nil {
		rep.fail("database.open_failed", err, "check "+h.DBPath()+" (a newer build may have migrated it)")
		return
	}
	defer db.Close()
	// Open migrates to the newest schema or refuses a newer one, so an
	// open database is at this build's version.
	rep.Database.OK, rep.Database.SchemaVersion = true, store.SchemaVersion()
	rep.pass()
	for _, status := range []string{demiurge.TaskQueued, demiurge.TaskRunning, demiurge.TaskBlocked} {
		tasks, err := db.ListTasks(ctx, demiurge.TaskFilter{Status: status, Limit: demiurge.MaxTaskLimit})
		if err != nil {
			rep.fail("database.query_failed", err, "check "+h.DBPath())
			return
		}
		rep.ActiveTasks += len(tasks)
	}
}

func diagnoseRepository(ctx context.Context, h host.Home, rep *doctorReport) {
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

// diagnoseCores loads every core of the agents tree and the global
// fallback, as a turn would (without saving local edits).
func diagnoseCores(h host.Home, rep *doctorReport) {
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
	sort.Strings(ids)
	found := false
	for _, id := range ids {
		found = found || id == rep.CoreID
		c := doctorCore{CoreID: id}
		if _, err := core.Load(h.CoreDir(id)); err != nil {
			rep.fail("core.load_failed", err, "fix agents/"+id+" or `demiurge core discard --yes`")
		} else {
			c.OK = true
			rep.pass()
		}
		rep.Cores = append(rep.Cores, c)
	}
	if !found {
		rep.failMsg("core.missing", fmt.Sprintf("core %q has no agent.yaml under %s", rep.CoreID, h.AgentsDir()), "check --core and runtime.default_core")
	}
}

func printDoctor(streams IO, rep *doctorReport) {
	printf(streams, "home: %s\n", rep.Home)
	if rep.Database.OK {
		printf(streams, "database: ok (schema version %d) %s\n", rep.Database.SchemaVersion, rep.Database.Path)
	} else {
		printf(streams, "database: unavailable %s\n", rep.Database.Path)
	}
	state := "consistent"
	if !rep.Repository.Consistent {
		state = "INCONSISTENT"
	}
	printf(streams, "core repository: %s %s\n", state, rep.Repository.Path)
	printf(streams, "live revision: %s\nprevious revision: %s\n", orNone(rep.Repository.Live), orNone(rep.Repository.Previous))
	printf(streams, "local edits: %d\n", rep.Repository.LocalEdits)
	for _, c := range rep.Cores {
		verdict := "ok"
		if !c.OK {
			verdict = "fails to load"
		}
		printf(streams, "core %s: %s\n", c.CoreID, verdict)
	}
	printf(streams, "active tasks: %d\n", rep.ActiveTasks)
	printf(streams, "timezone: %s (%s)\n", orNone(rep.Timezone.Name), orNone(rep.Timezone.Source))
	printf(streams, "sandbox: %s\n", sandboxLine(rep.Sandbox))
	for _, f := range rep.Findings {
		printf(streams, "%s %s: %s\n  fix: %s\n", f.Severity, f.Code, f.Message, f.Remediation)
	}
	if rep.OK {
		printf(streams, "ok\n")
	} else {
		printf(streams, "%d problem(s) found\n", rep.Counts.Error)
	}
}

// sandboxLine is the sandbox's state in one line.
func sandboxLine(r sandbox.Report) string {
	switch {
	case r.Mode == sandbox.ModeOff:
		return "off (sandbox.mode: off): terminal commands and MCP servers run unconfined"
	case r.Working:
		return fmt.Sprintf("working (%s, network %s, Landlock ABI %d)", r.Mode, r.Network, r.Landlock)
	case len(r.Missing) > 0:
		return "UNAVAILABLE: missing " + strings.Join(r.Missing, ", ")
	}
	return "UNAVAILABLE: " + r.Error
}
