package host

import (
	"context"
	"os"
	"strings"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/pyworker"
	"github.com/demiurge/demiurge/sandbox"
	"github.com/demiurge/demiurge/schedule"
)

// DoctorOptions configure Doctor.
type DoctorOptions struct {
	// Home is the runtime home (required); a missing one is created.
	Home string
	// CoreID is the core expected to load ("": config.yaml
	// runtime.default_core, then assistant).
	CoreID string
	// Getenv reads the explicit environment (default os.Getenv); the
	// doctor layers the home's .env under it itself.
	Getenv func(string) string
	// Timezone is the --timezone flag ("": DEMIURGE_TIMEZONE, then
	// config.yaml, then the host's zone).
	Timezone string
	// Repair tightens the modes of the home's private files and
	// directories (runtime.permissions.insecure) before checking them. It
	// changes no content.
	Repair bool
}

// DoctorReport is the health report of a runtime home; its JSON is the
// CLI's `doctor --json`.
type DoctorReport struct {
	Home       string           `json:"home"`
	CoreID     string           `json:"core_id"`
	OK         bool             `json:"ok"`
	Database   DoctorDatabase   `json:"database"`
	Repository DoctorRepository `json:"core_repository"`
	Cores      []DoctorCore     `json:"cores"`
	// ActiveTasks counts queued, running and blocked tasks of every Host
	// sharing the home (tasks of a Host that died are counted until a Host
	// opening the home reconciles them).
	ActiveTasks int `json:"active_tasks"`
	// Hosts are the Hosts registered in the ledger (the doctor itself
	// registers none).
	Hosts    DoctorHosts    `json:"hosts"`
	Timezone DoctorTimezone `json:"timezone"`
	Sandbox  sandbox.Report `json:"sandbox"`
	// Python is the interpreter of module.py slots and tools and whether a
	// worker starts in the sandbox.
	Python   pyworker.ProbeReport `json:"python"`
	Counts   DoctorCounts         `json:"counts"`
	Findings []DoctorFinding      `json:"findings"`
	// Repaired lists what --repair changed ("<path>: 0644 -> 0600").
	Repaired []string `json:"repaired,omitempty"`
}

// DoctorDatabase is the runtime database's part of the report.
type DoctorDatabase struct {
	// Engine is sqlite or postgres; Path the file, or the PostgreSQL
	// database as postgres://host:port/name (no user, no password).
	Engine        string `json:"engine"`
	Path          string `json:"path"`
	OK            bool   `json:"ok"`
	SchemaVersion int    `json:"schema_version"`
}

// DoctorRepository is the core repository's part of the report.
type DoctorRepository struct {
	Path       string `json:"path"`
	Consistent bool   `json:"consistent"`
	Live       string `json:"live_revision"`
	Previous   string `json:"previous_revision"`
	LocalEdits int    `json:"local_edits"`
}

// DoctorCore says whether one core of the agents tree loads.
type DoctorCore struct {
	CoreID string `json:"core_id"`
	OK     bool   `json:"ok"`
}

// DoctorTimezone is the resolved schedule timezone and where it came from.
type DoctorTimezone struct {
	Name   string `json:"name"`
	Source string `json:"source"`
}

// DoctorCounts counts the checks by outcome.
type DoctorCounts struct {
	OK      int `json:"ok"`
	Warning int `json:"warning"`
	Error   int `json:"error"`
}

// DoctorFinding is one problem, with what fixes it.
type DoctorFinding struct {
	Severity    string `json:"severity"`
	Code        string `json:"code"`
	Message     string `json:"message"`
	Remediation string `json:"remediation"`
	// Details are the finding's facts (paths, names), never a secret.
	Details map[string]any `json:"details,omitempty"`
}

// pass counts a check that found nothing; fail and failMsg record a
// finding (every finding is an error: the report is unhealthy on any).
func (r *DoctorReport) pass() { r.Counts.OK++ }

// warnMsg records a problem that only some cores have.
func (r *DoctorReport) warnMsg(code, msg, remediation string) {
	r.Counts.Warning++
	r.Findings = append(r.Findings, DoctorFinding{Severity: "warning", Code: code, Message: strings.Join(strings.Fields(msg), " "), Remediation: remediation})
}

// add records a finding of its own severity.
func (r *DoctorReport) add(f DoctorFinding) {
	switch f.Severity {
	case "error":
		r.Counts.Error++
	case "warning":
		r.Counts.Warning++
	default:
		r.Counts.OK++
	}
	f.Message = strings.Join(strings.Fields(f.Message), " ")
	r.Findings = append(r.Findings, f)
}

func (r *DoctorReport) fail(code string, err error, remediation string) {
	r.failMsg(code, demiurge.ErrorMessage(err), remediation)
}

func (r *DoctorReport) failMsg(code, msg, remediation string) {
	r.Counts.Error++
	r.Findings = append(r.Findings, DoctorFinding{Severity: "error", Code: code, Message: strings.Join(strings.Fields(msg), " "), Remediation: remediation})
}

// Doctor checks a runtime home: configuration, database (with the Hosts
// sharing it and their leases), core repository, cores, tasks, timezone
// and sandbox. Each part is checked on its own, so
// one broken part does not hide the others, and without opening the Host
// (no lease, no reconciliation, no workers). It fails only when the home
// itself cannot be resolved or created; every other problem is a finding.
func Doctor(ctx context.Context, opts DoctorOptions) (*DoctorReport, error) {
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	h, err := InitHome(opts.Home)
	if err != nil {
		return nil, err
	}
	rep := &DoctorReport{Home: h.Dir, Cores: []DoctorCore{}, Findings: []DoctorFinding{}, Hosts: DoctorHosts{Live: []DoctorHost{}}}

	checkPermissions(h, opts.Repair, rep)
	getenv := loadDoctorEnv(h, opts.Getenv, rep)
	cfg, err := LoadConfig(h.ConfigPath())
	if err == nil {
		err = cfg.Providers.Validate()
	}
	if err != nil {
		rep.fail("host_config.invalid", err, "fix "+h.ConfigPath())
	} else {
		rep.pass()
		checkProviderEnv(cfg, getenv, rep)
	}
	rep.CoreID = opts.CoreID
	if rep.CoreID == "" {
		rep.CoreID = cfg.Runtime.DefaultCore
	}
	if rep.CoreID == "" {
		rep.CoreID = "assistant"
	}
	doctorDatabase(ctx, h, cfg, getenv, rep)
	doctorRepository(ctx, h, rep)
	doctorCores(h, rep, getenv)
	if drift, err := TemplateDrift(h, rep.CoreID); err != nil {
		rep.fail("doctor.template_check_failed", err, "see the message")
	} else {
		for _, f := range drift {
			rep.add(f)
		}
		if len(drift) == 0 {
			rep.pass()
		}
	}
	if tz, err := schedule.ResolveTimezone(opts.Timezone, getenv(schedule.TimezoneEnv), cfg.Runtime.Timezone); err != nil {
		rep.fail("timezone.invalid", err, "set runtime.timezone in config.yaml or "+schedule.TimezoneEnv+" to an IANA zone name")
	} else {
		rep.Timezone = DoctorTimezone{Name: tz.Name, Source: tz.Source}
		rep.pass()
	}
	doctorPython(ctx, h, cfg, getenv, rep)
	doctorSandbox(h, cfg, getenv, rep)
	rep.OK = rep.Counts.Error == 0
	return rep, nil
}
