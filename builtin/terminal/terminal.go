package terminal

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/demiurge/demiurge/builtin/internal/tool"
	"github.com/demiurge/demiurge/builtin/internal/workspace"
	"github.com/demiurge/demiurge/cmdguard"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/policy"
	"github.com/demiurge/demiurge/process"
	"github.com/demiurge/demiurge/redact"
	"github.com/demiurge/demiurge/sandbox"
)

// Terminal timeouts in seconds (spec tool-runtime §7.1 step 5).
const (
	terminalDefaultTimeout = 30
	terminalMaxTimeout     = 120
)

const (
	// terminalSummaryPrefix starts every approval summary, so a denial
	// reads "approval denied: terminal command in <cwd>" (spec §4.6).
	terminalSummaryPrefix = "terminal command in "
)

func Terminal(d Deps) effect.Definition {
	return effect.Definition{
		Name: "terminal",
		Description: "Run a shell command in the workspace and return its exit code with the end of its stdout and stderr. " +
			"The command gets a minimal environment (PATH, locale, a private HOME); use env for extra variables and " +
			"secret_bindings to pass a Host secret by name. Output beyond 12,000 characters per stream keeps its tail.",
		Schema: tool.ObjectSchema(map[string]any{
			"command":            map[string]any{"type": "string", "description": "Shell command line."},
			"cwd":                map[string]any{"type": "string", "default": ".", "description": "Working directory, relative to the workspace."},
			"timeout_seconds":    map[string]any{"type": "integer", "minimum": 1, "maximum": terminalMaxTimeout, "default": terminalDefaultTimeout},
			"background":         map[string]any{"type": "boolean", "default": false, "description": "Run as a background task (terminal.exec); the call returns its task_id at once. No secret_bindings."},
			"notify_on_complete": map[string]any{"type": "boolean", "default": true, "description": "For background tasks."},
			"env": map[string]any{
				"type":                 "object",
				"description":          "Extra environment variables (names like NAME_1).",
				"additionalProperties": map[string]any{"type": []any{"string", "number", "boolean"}},
			},
			"secret_bindings": map[string]any{
				"type":        "array",
				"maxItems":    maxSecretBindings,
				"description": "Host secrets to expose to the command, by name; the output never shows their values.",
				"items": map[string]any{
					"type": "object",
					"properties": map[string]any{
						"source":             map[string]any{"type": "string", "description": "env:<NAME> of the Host environment."},
						"target":             map[string]any{"type": "string", "description": "Variable name the command sees (default NAME)."},
						"expires_in_seconds": map[string]any{"type": "integer", "minimum": 1, "maximum": terminalMaxTimeout, "description": "At most the timeout (the default)."},
					},
					"required":             []any{"source"},
					"additionalProperties": false,
				},
			},
		}, "command"),
		Source:         effect.SourceBuiltin,
		Risk:           "high",
		Capability:     "terminal.exec",
		ApprovalPolicy: effect.ApprovalPrompt,
		Adapter:        terminalTool{deps: d, now: time.Now}.adapter(),
	}
}

// terminalTool is the terminal adapter. Every check that needs no side
// effect (arguments, workspace scope, command guard, environment names,
// secret binding shape and exact grants) runs once, in Prepare, before
// approval, and the prepared call carries its results to the approval
// question and to Run, which reads the bound secrets, prepares the private
// home and runs the command through the process manager.
type terminalTool struct {
	deps Deps
	now  func() time.Time // the clock secret bindings expire by
}

// terminalArgs are the terminal's arguments. Env keeps its JSON values:
// they are stringified the way JSON shows them (envString).
type terminalArgs struct {
	Command          string         `json:"command"`
	Cwd              string         `json:"cwd"`
	TimeoutSeconds   *int64         `json:"timeout_seconds"`
	Background       bool           `json:"background"`
	NotifyOnComplete bool           `json:"notify_on_complete"`
	Env              map[string]any `json:"env"`
	SecretBindings   []bindingArg   `json:"secret_bindings"`
}

// timeout is the effective timeout_seconds (spec positive_int).
func (a terminalArgs) timeout() int64 {
	var n int64
	if a.TimeoutSeconds != nil {
		n = *a.TimeoutSeconds
	}
	return tool.Positive(n, terminalDefaultTimeout, terminalMaxTimeout)
}

// bindingArg is one secret_bindings item as the model wrote it.
type bindingArg struct {
	Source           string  `json:"source"`
	Target           *string `json:"target"`
	ExpiresInSeconds *int64  `json:"expires_in_seconds"`
}

func (t terminalTool) adapter() tool.Typed[terminalArgs] {
	return tool.Typed[terminalArgs]{Defaults: terminalArgs{NotifyOnComplete: true}, Call: t.prepare}
}

// terminalCall is a call that passed every pure check.
type terminalCall struct {
	deps           Deps
	inv            effect.Invocation
	args           terminalArgs
	command        string
	w              *workspace.Workspace
	root           string // the workspace root, every link resolved
	cwd            workspace.Target
	timeoutSeconds int64
	overlay        map[string]string
	bindings       []secretBinding
	// anchor is when a call with bindings passed its checks: a binding
	// expires counting from it, so an operator who answers late does not
	// lengthen how long a secret is exposed.
	anchor     time.Time
	verdict    cmdguard.Verdict
	background bool
	shell      string
}

// prepare runs the pure checks in the order of spec tool-runtime §7.1 and
// §7.5. A non-nil outcome refuses the call; nothing has run.
func (t terminalTool) prepare(_ context.Context, inv effect.Invocation, a terminalArgs) (effect.Call, *effect.Outcome) {
	switch {
	case t.deps.Processes == nil:
		return tool.Refuse(tool.Unavailable("terminal", "no process manager is configured"))
	case t.deps.PrivateHome == nil:
		return tool.Refuse(tool.Unavailable("terminal", "no private home is configured"))
	}
	c := &terminalCall{deps: t.deps, inv: inv, args: a, timeoutSeconds: a.timeout()}

	bindings, out := parseSecretBindings(a.SecretBindings, c.timeoutSeconds, a.Background)
	if out != nil {
		return tool.Refuse(*out)
	}
	if out := requireBindGrants(bindings, inv.Turn.Grants); out != nil {
		return tool.Refuse(*out)
	}
	if len(bindings) > 0 && t.deps.Getenv == nil {
		return tool.Refuse(tool.Unavailable("terminal", "no Host environment is configured for secret bindings"))
	}
	c.bindings = bindings

	c.command = a.Command
	if strings.TrimSpace(c.command) == "" {
		return tool.Refuse(tool.Invalid("command is required"))
	}
	w, wout, ok := workspace.Open(inv, t.deps.paths())
	if !ok {
		return tool.Refuse(wout)
	}
	c.w, c.root = w, w.Root()
	if out := c.resolveCwd(); out != nil {
		return tool.Refuse(*out)
	}

	overlay, out := parseEnvOverlay(a.Env)
	if out != nil {
		return tool.Refuse(*out)
	}
	c.overlay = overlay

	if a.Background && t.deps.TerminalTasks == nil {
		return tool.Refuse(tool.Unavailable("background terminal", "no task worker is configured"))
	}
	c.background = a.Background
	c.shell = terminalShell()
	c.verdict = cmdguard.Review(c.command)
	if c.verdict.Action == cmdguard.Block {
		return tool.Refuse(effect.Outcome{
			Denial:  "policy",
			Content: "terminal command blocked: " + c.verdict.Reason,
			Data: map[string]any{
				"reason": "command_guard", "command_guard": guardView(c.verdict),
				"audit": c.audit(time.Time{}, nil),
			},
		})
	}
	if err := t.deps.Sandbox.Check(); err != nil {
		return tool.Refuse(tool.Unavailable("terminal", err.Error()))
	}
	if len(c.bindings) > 0 {
		c.anchor = t.now()
	}
	return c, nil
}

// resolveCwd resolves the cwd argument (workspace scope as for a write)
// and checks that it is a directory.
func (c *terminalCall) resolveCwd() *effect.Outcome {
	tg, out, ok := c.w.Resolve(cmp.Or(c.args.Cwd, "."), workspace.OpWrite)
	if !ok {
		return &out
	}
	switch info, err := os.Stat(tg.Abs); {
	case err != nil:
		out := tool.Invalid("cwd does not exist: %s", tg.Show)
		return &out
	case !info.IsDir():
		out := tool.Invalid("cwd is not a directory: %s", tg.Show)
		return &out
	}
	c.cwd = tg
	return nil
}

// Recheck resolves the cwd again after approval: it may have been
// removed, or a link on its way swapped, while the operator decided. The
// command, its guard verdict and its environment are the call's own and
// cannot change.
func (c *terminalCall) Recheck(context.Context) *effect.Outcome { return c.resolveCwd() }

// ApprovalFacts describes the command for the operator (spec tool-runtime
// §7.5). A command the guard allows, without overlay or bindings, keeps
// the entry's folded policy (auto only when configured so); anything else
// is at least prompt. A call with an overlay or bindings is one-shot: its
// answer is never stored as a session grant.
func (c *terminalCall) ApprovalFacts() effect.ApprovalFacts {
	explicit := len(c.bindings) > 0 || len(c.overlay) > 0
	facts := effect.ApprovalFacts{
		Action:  "terminal.exec",
		Target:  c.cwd.Abs,
		Summary: terminalSummaryPrefix + c.cwd.Show,
		RuleKey: c.ruleKey(),
		OneShot: explicit,
		Notes:   []string{c.deps.Sandbox.Settings.Describe()},
	}
	switch {
	case explicit:
		facts.Baseline = policy.Prompt
		facts.Notes = append(facts.Notes, "the call sets environment variables or binds secrets: an answer covers this call only")
	case c.verdict.Action != cmdguard.Allow:
		facts.Baseline = policy.Prompt
		facts.Notes = append(facts.Notes, "\"allow for this session\" covers "+c.verdict.GrantCoverage())
	default:
		if why := c.repoPrograms(); why != "" {
			// A read-only git command in this repository would run a
			// program the repository names: that is project code.
			facts.Baseline = policy.Prompt
			facts.RuleKey = effect.RuleKey(cmdguard.CacheKeyFor(cmdguard.Verdict{RuleKey: "project-code-execution", Exact: true}, c.command,
				cmdguard.Execution{Cwd: c.cwd.Show, TimeoutSeconds: int(c.timeoutSeconds)}))
			facts.Notes = append(facts.Notes, "git would run a program of this repository: "+why+"; an answer covers this exact command only")
			break
		}
		// A literal read-only command runs without asking (spec
		// tool-runtime §7.5) unless the folded policy says deny.
		facts.Safe = true
	}
	return facts
}

// repoPrograms says why a git command of this call would run a program
// its repository configures, "" when it names no git or runs none.
func (c *terminalCall) repoPrograms() string {
	if !strings.Contains(c.command, "git") {
		return ""
	}
	return gitRunsRepoPrograms(c.root, c.cwd.Abs)
}

// ruleKey is the session-grant key of the call (spec tool-runtime §4.5,
// §7.5): the guard's rule key, narrowed to this exact command, directory,
// overlay and options when the rule is too coarse to say what the command
// does or the call carries an overlay or bindings.
func (c *terminalCall) ruleKey() effect.RuleKey {
	bindings := make([]cmdguard.BindingAudit, 0, len(c.bindings))
	for _, b := range c.bindings {
		// No expiry: it differs on every call, and such calls are one-shot.
		bindings = append(bindings, cmdguard.BindingAudit{Source: b.Source(), Target: b.Target, Capability: b.Capability()})
	}
	return effect.RuleKey(cmdguard.CacheKeyFor(c.verdict, c.command, cmdguard.Execution{
		Cwd: c.cwd.Show, Env: c.overlay, TimeoutSeconds: int(c.timeoutSeconds), SecretBindings: bindings,
	}))
}

// Run runs the approved command.
func (c *terminalCall) Run(ctx context.Context) (effect.Outcome, error) {
	d, inv := c.deps, c.inv
	if c.background {
		env, err := backgroundEnv(d, inv.Turn.SessionID, c.overlay)
		if err != nil {
			return tool.Invalid("terminal private home cannot be prepared: %s", tool.IOReason(err)), nil
		}
		return d.TerminalTasks.submit(ctx, inv, c, env, d.sandboxPolicy(c.root, d.PrivateHome(inv.Turn.SessionID)), c.audit(time.Time{}, env)), nil
	}
	anchor := c.anchor
	now := time.Now()
	bound, out := resolveBindings(c.bindings, anchor, now, d.Getenv)
	if out != nil {
		out.Data = map[string]any{"audit": c.audit(anchor, nil)}
		return *out, nil
	}
	// From here on the values are known secrets of the turn: every later
	// view of every call is redacted with them.
	inv.Turn.Secrets.Add(bound.secrets...)

	home := d.PrivateHome(inv.Turn.SessionID)
	tmp, err := preparePrivateHome(home)
	if err != nil {
		return tool.Invalid("terminal private home cannot be prepared: %s", tool.IOReason(err)), nil
	}
	env := commandEnv(os.Environ(), home, tmp, c.overlay, bound.env)

	timeout := time.Duration(c.timeoutSeconds) * time.Second
	timeoutReason := "command_timeout"
	if !bound.deadline.IsZero() {
		if left := bound.deadline.Sub(now); left < timeout {
			timeout, timeoutReason = left, "secret_binding_expiry"
		}
	}
	audit := c.audit(anchor, env)
	audit["effective_timeout_seconds"] = math.Ceil(timeout.Seconds())
	audit["timeout_reason"] = timeoutReason

	res, err := d.Processes.Run(ctx, process.Spec{
		Argv:          []string{c.shell, "-c", c.command},
		Dir:           c.cwd.Abs,
		Env:           env,
		Timeout:       timeout,
		SessionID:     inv.Turn.SessionID,
		Redact:        inv.Turn.Secrets.Replacements(),
		Discover:      outputDiscovery(inv.Turn.Secrets),
		ArtifactLimit: d.artifactLimit(),
		TailChars:     terminalOutputChars,
		Sandbox:       d.sandboxPolicy(c.root, home),
	})
	switch {
	case errors.Is(ctx.Err(), context.Canceled):
		// The turn was cancelled: the process tree is gone and the
		// cancellation propagates; there is no command result.
		return effect.Outcome{}, ctx.Err()
	case ctx.Err() != nil && res.PID != 0:
		// A deadline above the call's own (the dispatcher's) ended the
		// command first: it timed out all the same, and its output is
		// worth showing.
		res.TimedOut, err = true, nil
	}
	if err != nil {
		return effect.Outcome{
			IsError: true, ExecutionStarted: res.PID != 0,
			Content: "terminal command failed to start: " + replaceBound(err.Error(), bound.redact),
			Data:    map[string]any{"audit": audit},
		}, nil
	}
	if res.Resolved != "" {
		audit["resolved_executable"] = res.Resolved
	}
	if res.Limit != "" {
		audit["killed_by"] = "sandbox " + res.Limit
	}
	shown := formatTerminalResult(res, bound.redact)
	data := map[string]any{
		"exit_code": shown.exitCode, "cwd": c.cwd.Show, "timed_out": shown.timedOut,
		"audit":   audit,
		"process": processView(res),
		"output":  map[string]any{"stdout": shown.stdout, "stderr": shown.stderr},
	}
	if a := artifactView(res); a != nil {
		data["output_artifact"] = a
	}
	if res.ArtifactErr != nil {
		return effect.Outcome{
			IsError: true, ExecutionStarted: true, Data: data,
			Content: "terminal output artifact persistence failed: " + replaceBound(res.ArtifactErr.Error(), bound.redact),
		}, nil
	}
	return effect.Outcome{
		Content: shown.content, Data: data,
		IsError: shown.exitCode != 0, ExecutionStarted: true,
	}, nil
}

// audit is the call's audit view (spec tool-runtime §7.5): where and how
// the command runs, which names its environment has (never a value), and
// what it binds. env is the built environment, nil before it exists (the
// names are then derived without touching the file system).
func (c *terminalCall) audit(anchor time.Time, env []string) map[string]any {
	d := c.deps
	if env == nil {
		home := d.PrivateHome(c.inv.Turn.SessionID)
		names := make(map[string]string, len(c.bindings))
		for _, b := range c.bindings {
			names[b.Target] = ""
		}
		env = commandEnv(os.Environ(), home, filepath.Join(home, "tmp"), c.overlay, names)
	}
	return map[string]any{
		"cwd": c.cwd.Abs, "cwd_relative": c.cwd.Show,
		"resolved_executable": c.shell, "shell_executable": c.shell,
		"command_executable": commandExecutable(c.command, c.cwd.Abs, envLookup(env, "PATH"), c.shell),
		"timeout_seconds":    c.timeoutSeconds,
		"env_keys":           envKeys(env),
		"overlay_env_keys":   append([]string{}, slices.Sorted(maps.Keys(c.overlay))...), // [] rather than null
		"secret_bindings":    bindingAudit(c.bindings, anchor),
		"sandbox":            d.Sandbox.Settings.View(),
	}
}

// sandboxPolicy is the sandbox of one command run in the workspace root
// with the private home (its TMPDIR inside), nil when the operator turned
// the sandbox off.
func (d Deps) sandboxPolicy(root, home string) *sandbox.Policy {
	if !d.Sandbox.Settings.Enabled() {
		return nil
	}
	p := d.Sandbox.Policy(root, home)
	return &p
}

// guardView is the command guard's verdict as results show it.
func guardView(v cmdguard.Verdict) map[string]any {
	return map[string]any{"action": string(v.Action), "risk": v.Risk, "reason": v.Reason, "rule_key": v.RuleKey}
}

// processView is the identity of the finished process.
func processView(res process.Result) map[string]any {
	m := map[string]any{
		"spawn_id": res.SpawnID, "pid": res.PID, "start_identity": res.StartMarker,
		"duration_ms": res.Duration.Milliseconds(), "cancelled": res.Cancelled,
	}
	if res.Signal != "" {
		m["signal"] = res.Signal
	}
	return m
}

// artifactView names the files holding the full (redacted) streams, nil
// when no stream was stored.
func artifactView(res process.Result) map[string]any {
	streams := map[string]any{}
	var truncated []any
	for _, st := range []struct {
		name string
		s    process.Stream
	}{{"stdout", res.Stdout}, {"stderr", res.Stderr}} {
		if st.s.ArtifactPath == "" {
			continue
		}
		streams[st.name] = st.s.ArtifactPath
		if st.s.ArtifactTruncated {
			truncated = append(truncated, st.name)
		}
	}
	if len(streams) == 0 {
		return nil
	}
	view := map[string]any{"kind": "terminal-output", "streams": streams}
	if len(truncated) > 0 {
		// Each stream's total_bytes stays in the result's stream stats.
		view["truncated_streams"] = truncated
	}
	return view
}

// terminalShell is the shell commands run with: bash from the Host's PATH
// (resolved before any overlay, so a call cannot pick its own shell
// binary), else /bin/sh.
func terminalShell() string {
	if p, err := exec.LookPath("bash"); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			return abs
		}
	}
	return "/bin/sh"
}

// preparePrivateHome creates the command's HOME and its temporary
// directory, both private to the Host's user (0700), and returns the
// temporary directory. It runs only after approval.
func preparePrivateHome(home string) (string, error) {
	if !filepath.IsAbs(home) {
		return "", fmt.Errorf("private home is not an absolute path")
	}
	tmp := filepath.Join(home, "tmp")
	for _, dir := range []string{home, tmp} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return "", err
		}
		info, err := os.Lstat(dir)
		if err != nil {
			return "", err
		}
		if !info.IsDir() {
			return "", fmt.Errorf("%s is not a directory", filepath.Base(dir))
		}
		if info.Mode().Perm() != 0o700 {
			if err := os.Chmod(dir, 0o700); err != nil {
				return "", err
			}
		}
	}
	return tmp, nil
}

// replaceBound removes bound secret values from a message.
func replaceBound(s string, replacements map[string]string) string {
	if len(replacements) == 0 {
		return s
	}
	return redact.ReplaceAll(s, replacements)
}

// Deps is what the terminal needs of the Host. Without Processes or
// PrivateHome the terminal answers that it is not available, before
// approval.
type Deps struct {
	// Home is the runtime home; the cwd may not lie in it.
	Home string
	// ProtectedNames are the file names writes refuse (the cwd is resolved
	// like a write).
	ProtectedNames []string
	// Processes runs commands (process tree ownership, timeouts, bounded
	// output, artifacts).
	Processes *process.Manager
	// PrivateHome returns the directory a session's commands get as HOME
	// (their TMPDIR is its tmp subdirectory). It must be private to the
	// Host and lie outside the runtime home, which the sandbox hides;
	// terminal creates it with mode 0700 after approval.
	PrivateHome func(sessionID string) string
	// Sandbox is the OS sandbox every command runs in: the operator's
	// settings and the paths it hides. The zero value sandboxes, with
	// network; Settings.Mode off runs commands unconfined. Where the
	// kernel lacks a feature the sandbox needs, terminal refuses every
	// command before approval.
	Sandbox sandbox.Profile
	// ArtifactLimit bounds each stream of a command's output artifact, in
	// bytes; zero means DefaultArtifactLimit.
	ArtifactLimit int64
	// Getenv reads the Host environment for secret bindings only, after
	// approval. Without it a call with secret_bindings is refused.
	Getenv func(name string) string
	// TerminalTasks runs terminal(background=true) as terminal.exec tasks.
	// Without it a background call answers that no task worker is
	// configured, before approval.
	TerminalTasks *Tasks
}

func (d Deps) paths() workspace.HostPaths {
	return workspace.HostPaths{Home: d.Home, Hidden: d.Sandbox.Hidden, Protected: d.ProtectedNames}
}
