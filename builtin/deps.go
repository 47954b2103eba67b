package builtin

import (
	"github.com/demiurge/demiurge/builtin/delegate"
	"github.com/demiurge/demiurge/builtin/evolve"
	"github.com/demiurge/demiurge/builtin/files"
	"github.com/demiurge/demiurge/builtin/sessions"
	"github.com/demiurge/demiurge/builtin/skills"
	"github.com/demiurge/demiurge/builtin/tasks"
	"github.com/demiurge/demiurge/builtin/terminal"
	"github.com/demiurge/demiurge/process"
	"github.com/demiurge/demiurge/sandbox"
	"github.com/demiurge/demiurge/schedule"
	"github.com/demiurge/demiurge/urlpolicy"
)

// Deps is what the builtin toolsets need of the Host, as the composition
// root fills it once. Each toolset declares the narrow Deps it uses;
// Definitions hands every toolset its part. A nil field leaves the tools
// that need it registered but answering that they are not available, so a
// misconfigured Host fails closed rather than acting without its checks.
type Deps struct {
	// Home is the runtime home. todo keeps its per-session state under
	// <Home>/runtime/session-state/<sha256(session id)>/todo.json.
	Home string

	// Sessions serves session_search. It must answer owned reads only:
	// Get and List see what the scope may see; Transcript is called only
	// with ids that Get or List returned. *session.Runtime implements it.
	Sessions sessions.Searcher

	// CoreDir returns the directory of a core, SkillsDir its skills root
	// (slots.skills or <surface>/skills; it may not exist yet). The skills
	// root must lie inside the core directory.
	CoreDir   func(coreID string) string
	SkillsDir func(coreID string) string

	// CoreLoader loads the core in dir and reports why it does not load.
	// skill_manage calls it after every change and rolls the change back
	// when it fails. Without it skill_manage refuses to change anything.
	CoreLoader func(dir string) error

	// ProtectedNames are file names (compared case-insensitively) that
	// write_file and patch refuse to write anywhere in the workspace, with
	// "write blocked for protected file: <name>".
	ProtectedNames []string

	// Processes runs terminal commands (process tree ownership, timeouts,
	// bounded output, artifacts). Without it terminal answers "terminal is
	// not available: no process manager is configured" before approval.
	Processes *process.Manager

	// PrivateHome returns the directory a session's terminal commands get
	// as HOME (their TMPDIR is its tmp subdirectory). It must be private
	// to the Host and lie outside the runtime home, which the sandbox
	// hides; terminal creates it with mode 0700 after approval. Without
	// it terminal is not available.
	PrivateHome func(sessionID string) string

	// Sandbox is the OS sandbox every terminal command runs in: the
	// operator's settings and the paths it hides (the composition root
	// adds the runtime home and the root of the private homes). The zero
	// value sandboxes, with network; Settings.Mode off runs commands
	// unconfined. Where the kernel lacks a feature the sandbox needs,
	// terminal refuses every command before approval.
	Sandbox sandbox.Profile

	// ArtifactLimit bounds each stream of a terminal command's output
	// artifact, in bytes (the operator's limits.artifact_mb_per_stream);
	// zero means DefaultArtifactLimit. The stream goes on being drained
	// and counted past it; the artifact ends with a truncation marker.
	ArtifactLimit int64

	// Getenv reads the Host environment for terminal secret bindings only:
	// a bound value is read through it after approval, never before. The
	// command's ordinary environment is the allowlist of spec tool-runtime
	// §7.2 and never comes through here. Without it a call with
	// secret_bindings is refused.
	Getenv func(name string) string

	// TerminalTasks runs terminal(background=true) as terminal.exec tasks.
	// Without it a background call answers that no task worker is
	// configured, before approval.
	TerminalTasks *terminal.Tasks

	// Tasks serves the model-facing task tools (task_list, task_status,
	// task_control, yield_until). Without them those tools answer that no
	// task worker is configured.
	Tasks tasks.Control

	// Delegator runs delegate_task. Without it the tool answers that no
	// task worker is configured.
	Delegator delegate.Delegator

	// Evolution serves evolve_core and rollback_core. Without it those
	// tools answer that no core repository is configured.
	Evolution evolve.Evolution

	// Timezone is the runtime timezone schedules run in (the Host's
	// resolution of --timezone, DEMIURGE_TIMEZONE and config.yaml). Zero:
	// schedule_manage resolves DEMIURGE_TIMEZONE or the host's zone itself.
	Timezone schedule.Timezone

	// URLPolicy judges every URL web_extract fetches: before approval,
	// after it, and on every connection and redirect. The zero value is
	// the strict default (public addresses only, system DNS). Its
	// AllowPrivate and AllowPrivatePrefixes come from Host configuration
	// only, never from an Agent Core.
	URLPolicy urlpolicy.Policy
}

// files is the file tools' part.
func (d Deps) files() files.Deps {
	return files.Deps{Home: d.Home, Hidden: d.Sandbox.Hidden, ProtectedNames: d.ProtectedNames}
}

// skills is the skill tools' part.
func (d Deps) skills() skills.Deps {
	return skills.Deps{CoreDir: d.CoreDir, SkillsDir: d.SkillsDir, CoreLoader: d.CoreLoader}
}

// Terminal is the terminal's part, for the tool and for the background
// runner the composition root builds (terminal.NewTasks).
func (d Deps) Terminal() terminal.Deps {
	return terminal.Deps{
		Home: d.Home, ProtectedNames: d.ProtectedNames, Processes: d.Processes, PrivateHome: d.PrivateHome,
		Sandbox: d.Sandbox, ArtifactLimit: d.ArtifactLimit, Getenv: d.Getenv, TerminalTasks: d.TerminalTasks,
	}
}
