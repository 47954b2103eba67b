package host

import (
	"cmp"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/builtin/terminal"
	"github.com/demiurge/demiurge/controlplane"
	"github.com/demiurge/demiurge/core"
	"github.com/demiurge/demiurge/corerepo"
	"github.com/demiurge/demiurge/delegation"
	"github.com/demiurge/demiurge/delivery"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/internal/envfile"
	"github.com/demiurge/demiurge/mcp"
	"github.com/demiurge/demiurge/process"
	"github.com/demiurge/demiurge/pyworker"
	"github.com/demiurge/demiurge/schedule"
	"github.com/demiurge/demiurge/session"
	"github.com/demiurge/demiurge/slot"
	"github.com/demiurge/demiurge/starlark"
	"github.com/demiurge/demiurge/store"
	"github.com/demiurge/demiurge/turn"
	"github.com/demiurge/demiurge/urlpolicy"
)

// Options configure Open.
type Options struct {
	// Home is the runtime home directory (required).
	Home string
	// FakeScript is the fake provider's script file ("" for none).
	FakeScript string
	// Getenv reads the environment (default os.Getenv). With an EnvFile
	// it must read the explicit environment first and the file second
	// (envfile.Layer).
	Getenv func(string) string
	// EnvFile is the runtime home's .env as the caller loaded it (nil:
	// none). The Host never copies it into the process environment; its
	// values join the secret set that logs, persisted errors and tool
	// output are scrubbed of.
	EnvFile *envfile.File
	// Logger receives diagnostics (default: <home>/logs/host.log, redacted).
	Logger *slog.Logger
	// URLPolicy judges every URL the Host fetches for a tool. It is a Host
	// option only (tests admit loopback through it); nothing an Agent Core
	// declares can change it. The zero value refuses private addresses.
	URLPolicy urlpolicy.Policy
	// Timezone is the --timezone flag ("" : DEMIURGE_TIMEZONE, then
	// config.yaml runtime.timezone, then the host's zone).
	Timezone string

	// MachineName names this Host's machine in its lease (default the
	// OS host name). Hosts of one machine name are asked whether their
	// process lives (a dead one is gone at once); Hosts of another are
	// judged by their lease alone. Fleet tests and the bench give Host
	// processes of one machine different names to stand for machines.
	MachineName string
	// TaskRunners replace the Host's own task bodies, by kind: a program
	// that embeds the Host runs its own work through the task ledger (the
	// fleet tests and the bench run trivial tasks this way).
	TaskRunners map[string]controlplane.Runner
	// MaxActiveTasks bounds the background tasks this Host runs at once
	// (controlplane.WorkerOptions.MaxActive; 0: config.yaml
	// runtime.max_active_tasks, else unbounded).
	MaxActiveTasks int
	// OneShot opens a Host for one command (`demiurge run`, a listing):
	// it starts no background loop that only a Host that stays needs (the
	// delivery retries, the watch for gone Hosts, the core checkout's
	// watch), and its task worker takes no task queued for any Host, which
	// it would cancel when the command ends. Reconciliation still runs at
	// Open.
	OneShot bool
	// Preload names cores the caller is about to run ("" for the default
	// core): on SQLite they are parsed while Open still runs, beside its
	// other steps (open_repo.go), so that their first Load only checks the
	// checkout's revision. A core that fails to load is left for that Load
	// to report.
	Preload []string
	// ExitAfterClose says the process exits right after Close (the
	// demiurge binary): Close then leaves to the exit what the exit
	// releases anyway and closing would only free (the runtime database's
	// SQLite connections, store.DB.CloseForExit). A program that goes on
	// after Close leaves it false.
	ExitAfterClose bool

	// failAfter, set by tests only, fails Open right after the named step
	// opened its resource (see closeStack).
	failAfter func(step string) error
}

// Host is one running Host process over a runtime home. Its subsystems
// are its own: callers (the CLI, channels) reach them through its methods.
type Host struct {
	home      Home
	config    Config
	store     *store.DB
	sessions  *session.Runtime
	router    *delivery.Router
	turns     *turn.Execution
	approvals *effect.ApprovalRuntime
	processes *process.Manager
	// python runs the cores' module.py slots and tools, one worker per
	// core revision (python.go).
	python *pyworker.Pool
	// control is the task ledger; tasks the live worker that runs this
	// Host's background tasks.
	control *controlplane.ControlPlane
	tasks   *controlplane.Worker
	// scheduler fires the cores' schedules; its loop runs only where
	// StartScheduler is called (serve, chat).
	scheduler *schedule.Scheduler
	timezone  schedule.Timezone
	// repo is the core repository: every revision of the agents tree.
	repo *corerepo.Repo
	// mcp holds the connections to the cores' MCP servers.
	mcp *mcp.Manager

	lease    *store.Host
	catalogs *catalogs
	// machine, taskRunners and maxActiveTasks are the Options of the
	// same names.
	machine        string
	taskRunners    map[string]controlplane.Runner
	maxActiveTasks int
	oneShot        bool
	logger         *slog.Logger
	// closers closes what Open opened, in reverse order.
	closers *closeStack
	// schedLoop owns the scheduler loop apart from the other loops: it
	// stops before task admission closes, so no occurrence is claimed that
	// could not be run.
	schedLoop *loops
	children  *delegation.Service
	delivery  *delivery.Runtime
	cores     *coreLoader
	// providers and globalUI serve the front ends' questions about the
	// settings a turn would run with (terminal_ui.go).
	providers *providers
	globalUI  core.UIConfig
	// links are the attached approvers and the child-agent lineage
	// (approvals_attach.go); feed routes committed events to subscribers
	// (feed.go).
	links *sessionLinks
	feed  *feedHub

	// getenv and urlPolicy are the Host options the channels need:
	// credentials by variable name, and the policy callbacks go through.
	getenv    func(string) string
	urlPolicy urlpolicy.Policy
	// gateway runs the channels once StartGateway is called (gateway.go).
	gateway *gatewayRun
}

// Open initialises the home if needed, opens the store, takes this process's
// heartbeat lease and reconciles work of Host processes that are gone. When
// a step fails, what the steps before it opened is closed again.
func Open(ctx context.Context, opts Options) (_ *Host, err error) {
	if opts.Home == "" {
		return nil, demiurge.Errorf(demiurge.ECONFIG, "runtime home is not set")
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	dir, err := filepath.Abs(opts.Home)
	if err != nil {
		return nil, demiurge.WrapError(demiurge.ECONFIG, err, "runtime home %q is not usable", opts.Home)
	}
	if _, err := Init(dir, ""); err != nil {
		return nil, err
	}
	h := &Host{home: Home{Dir: dir}, closers: &closeStack{failAfter: opts.failAfter}, links: newSessionLinks(),
		getenv: opts.Getenv, urlPolicy: opts.URLPolicy, machine: opts.MachineName, taskRunners: opts.TaskRunners,
		maxActiveTasks: opts.MaxActiveTasks, oneShot: opts.OneShot}
	var aside *repoOpening
	defer func() {
		if err != nil {
			// The step's error is the one to report; closing what was
			// opened is best effort.
			if aside != nil {
				aside.abandon()
			}
			_ = h.closers.close(ctx)
		}
	}()
	if h.config, err = LoadConfig(h.home.ConfigPath()); err != nil {
		return nil, err
	}
	provs := &providers{cfg: h.config.Providers, fakeScript: opts.FakeScript, getenv: opts.Getenv, envFile: opts.EnvFile}
	if opts.Logger == nil {
		var logFile *os.File
		if opts.Logger, logFile, err = openLog(h.home, provs.Secrets); err != nil {
			return nil, err
		}
		if err := h.closers.opened("log", 0, func(context.Context) error { return logFile.Close() }); err != nil {
			return nil, err
		}
	}
	h.logger = opts.Logger

	where, err := Database(h.home, h.config, opts.Getenv)
	if err != nil {
		return nil, err
	}
	// The interpreter of authored Starlark is made first: the repository's
	// goroutine compiles the preloaded cores' slot modules into it.
	interp := starlark.NewRuntime(starlark.Options{MemoryLimit: h.config.Limits.authoredMemoryLimit()})
	if !store.IsDatabaseURL(where) {
		// An empty id in Preload is the default core, as in a turn.
		preload := make([]string, len(opts.Preload))
		for i, id := range opts.Preload {
			preload[i] = h.coreOrDefault(id)
		}
		aside = h.openRepoAside(ctx, preload, interp)
	}
	if h.store, err = store.Open(ctx, where, store.Options{Logger: opts.Logger, ProcessAlive: process.Alive}); err != nil {
		return nil, err
	}
	closeStore := h.store.Close
	if opts.ExitAfterClose {
		closeStore = h.store.CloseForExit
	}
	if err := h.closers.opened("store", 0, func(context.Context) error { return closeStore() }); err != nil {
		return nil, err
	}
	if err := h.startLease(ctx); err != nil {
		return nil, err
	}
	if err := h.closers.opened("lease", 5*time.Second, h.lease.Close); err != nil {
		return nil, err
	}
	if _, err = h.reconcile(ctx); err != nil {
		return nil, err
	}
	// The core repository opens on the ledger: on PostgreSQL this Host
	// starts on the live revision the other Hosts run (core_ledger.go).
	// On SQLite it has been opening beside the store since Database.
	if aside != nil {
		if h.repo, h.cores, err = aside.take(); err != nil {
			return nil, err
		}
	} else if err := h.openRepo(ctx); err != nil {
		return nil, err
	} else {
		h.cores = newCoreLoader(h.home, h.repo)
	}
	if err := h.closers.opened("core repository", 0, func(context.Context) error { return h.repo.Close() }); err != nil {
		return nil, err
	}
	if _, err := h.repo.Follow(ctx); err != nil {
		// Unsaved edits over a moved revision: every turn refuses them
		// with the same error until they are saved or discarded.
		h.logger.Warn("core repository does not follow the shared live revision", "err", err)
	}
	global, err := core.LoadGlobal(filepath.Join(h.home.AgentsDir(), "agent.yaml"))
	if err != nil {
		return nil, err
	}
	provs.fallback = fallbackModel{provider: global.Model.Provider, model: global.Model.ModelName, options: global.Model.ModelOptions}
	h.providers, h.globalUI = provs, global.UI

	if h.timezone, err = schedule.ResolveTimezone(opts.Timezone, opts.Getenv("DEMIURGE_TIMEZONE"), h.config.Runtime.Timezone); err != nil {
		return nil, err
	}
	h.sessions = session.NewRuntime(h.store, session.Options{})
	h.router = delivery.NewRouter()
	if h.processes, err = process.NewManager(process.ManagerOptions{ArtifactRoot: h.home.ArtifactsDir(), Logger: opts.Logger}); err != nil {
		return nil, err
	}
	if err := h.closers.opened("processes", 5*time.Second, h.processes.Close); err != nil {
		return nil, err
	}
	h.approvals = effect.NewApprovalRuntime(effect.ApprovalOptions{})
	if err := h.closers.opened("approvals", 5*time.Second, h.approvals.Shutdown); err != nil {
		return nil, err
	}
	deps := h.builtinDeps()
	deps.Getenv, deps.URLPolicy, deps.Timezone = opts.Getenv, opts.URLPolicy, h.timezone
	deps.Sandbox = SandboxProfile(h.home, h.config, opts.Getenv)
	if err := h.openPython(deps.Sandbox); err != nil {
		return nil, err
	}
	h.mcp = mcp.NewManager(mcp.Options{
		URLPolicy: opts.URLPolicy,
		BaseEnv:   func() []string { return terminal.AllowlistedEnv(os.Environ()) },
		Getenv:    opts.Getenv,
		PrivateHome: func(server string) string {
			return filepath.Join(h.home.PrivateDir(), "mcp-home", server)
		},
		Sandbox:   deps.Sandbox,
		LogDir:    filepath.Join(h.home.LogsDir(), "mcp"),
		Processes: h.processes,
		Logger:    opts.Logger,
	})
	if err := h.closers.opened("mcp", 5*time.Second, h.mcp.Close); err != nil {
		return nil, err
	}
	h.catalogs = &catalogs{starlark: interp, python: h.python, global: approvalConfig(global.Approval), mcp: h.mcp, approvals: h.approvals, logger: opts.Logger, audit: h.store.Append,
		decls: &declCache{cores: map[string]cachedDecls{}}}
	h.delivery = delivery.NewRuntime(h.store, h.router, delivery.Options{HostID: h.lease.ID(), Logger: opts.Logger})
	loops := newLoops()
	if !opts.OneShot {
		loops.goRun(h.recoveryLoop)
		loops.goRun(func(ctx context.Context) {
			if err := h.delivery.Run(ctx); err != nil {
				h.logger.Warn("delivery loop stopped", "err", err)
			}
		})
	}
	if err := h.closers.opened("loops", 5*time.Second, func(ctx context.Context) error {
		loops.stop()
		if err := h.delivery.Wait(ctx); err != nil {
			h.logger.Warn("delivery route calls still running at close", "err", err)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	h.children = h.newDelegation()
	h.turns = turn.New(turn.Deps{
		Agents:       h.children,
		ArtifactRoot: h.home.ArtifactsDir(),
		State:        h.store,
		Store:        h.store,
		Sessions:     h.sessions,
		Deliveries:   h.delivery,
		Router:       h.router,
		Slots:        slot.NewRuntime(interp, slot.Options{Python: h.python}),
		Cores:        h.cores,
		Providers:    provs,
		Catalogs:     h.catalogs,
		Effects:      effect.NewRuntime(effect.Options{Approvals: h.approvals}),
		HostID:       h.lease.ID(),
		Logger:       opts.Logger,

		MaxToolCallsPerStep: h.config.Limits.ToolCallsPerStep,
	})
	if err := h.closers.opened("turns", 10*time.Second, h.turns.Close); err != nil {
		return nil, err
	}
	// The worker's task bodies run turns and use the catalog, so it starts
	// last; the builtin tools get their task surfaces from it.
	if err := h.startTasks(ctx, &deps); err != nil {
		return nil, err
	}
	h.catalogs.builtins, h.catalogs.cache = deps, &catalogCache{}
	if h.scheduler, err = h.newScheduler(h.timezone); err != nil {
		return nil, err
	}
	h.schedLoop = newLoops()
	if err := h.closers.opened("scheduler", 0, func(context.Context) error {
		h.schedLoop.stop()
		return nil
	}); err != nil {
		return nil, err
	}
	if err := h.openFeed(); err != nil {
		return nil, err
	}
	if aside != nil {
		aside.wait() // the preloaded cores are parsed
	}
	return h, nil
}

// StartScheduler runs the scheduler loop until the Host closes. Call it
// before Close.
func (h *Host) StartScheduler() {
	h.schedLoop.goRun(func(ctx context.Context) {
		if err := h.scheduler.Run(ctx); err != nil && ctx.Err() == nil {
			h.logger.Warn("scheduler stopped", "err", err)
		}
	})
}

func (h *Host) startLease(ctx context.Context) error {
	pid := os.Getpid()
	marker, err := process.StartMarker(pid)
	if err != nil {
		marker = "" // platforms without start markers rely on the heartbeat alone
	}
	hostname := h.machine
	if hostname == "" {
		hostname, _ = os.Hostname()
	}
	h.lease, err = h.store.StartHost(ctx, store.HostInfo{PID: pid, StartMarker: marker, Hostname: hostname})
	return err
}

// Run executes one turn. Unset request fields get the Host defaults: the
// configured default core, and the local CLI conversation for that core.
func (h *Host) Run(ctx context.Context, req turn.Request) (turn.Result, error) {
	req.CoreID = h.coreOrDefault(req.CoreID)
	if req.Channel == "" {
		conv := session.CLIConversationKey(req.CoreID)
		req.Channel, req.ConversationKey = conv.Channel, conv.Key
	}
	if req.Workspace == "" {
		ws, err := h.Workspace(ctx, req.CoreID, h.home.WorkspaceDir())
		if err != nil {
			return turn.Result{}, err
		}
		req.Workspace = ws
	}
	return h.turns.Run(ctx, req)
}

// Workspace is the workspace of coreID's turns when the operator names
// none: the core's runtime.workspace (relative to the core directory,
// created 0700 when missing), else fallback. A core that does not load is
// its error.
func (h *Host) Workspace(ctx context.Context, coreID, fallback string) (string, error) {
	coreID = h.coreOrDefault(coreID)
	snap, err := h.LoadCore(ctx, coreID)
	if err != nil {
		return "", err
	}
	w := snap.Core.Manifest.Runtime.Workspace
	if w == nil || strings.TrimSpace(*w) == "" {
		return fallback, nil
	}
	ws := filepath.FromSlash(strings.TrimSpace(*w))
	if !filepath.IsAbs(ws) {
		ws = filepath.Join(h.home.CoreDir(coreID), ws)
	}
	if err := os.MkdirAll(ws, 0o700); err != nil {
		return "", demiurge.WrapError(demiurge.ECONFIG, err, "agents/%s/agent.yaml: runtime.workspace %s cannot be created: %s", coreID, ws, demiurge.IOReason(err))
	}
	return ws, nil
}

// Close closes what Open opened, in reverse order (see the package doc):
// it stops the scheduler, drains the tasks, cancels the running turns and
// waits for them, stops the loops, closes the MCP connections, the
// approvals and the process manager, releases the lease and closes the
// store and the log. Each step is bounded by its own time whatever ctx
// says. Closing twice is harmless.
func (h *Host) Close(ctx context.Context) error {
	return h.closers.close(ctx)
}

// LoadCore loads and pins a core of the home.
func (h *Host) LoadCore(ctx context.Context, coreID string) (turn.Snapshot, error) {
	return h.cores.Load(ctx, coreID)
}

// coreOrDefault is coreID, or config.yaml's runtime.default_core for "".
func (h *Host) coreOrDefault(coreID string) string {
	return cmp.Or(coreID, h.config.Runtime.DefaultCore)
}

// Catalog prepares the catalog a turn of coreID would see now.
func (h *Host) Catalog(ctx context.Context, coreID string) (*effect.Catalog, turn.Snapshot, error) {
	coreID = h.coreOrDefault(coreID)
	snap, err := h.LoadCore(ctx, coreID)
	if err != nil {
		return nil, snap, err
	}
	cat, err := h.catalogs.Prepare(ctx, snap, effect.TurnContext{})
	return cat, snap, err
}

// ForgetSession drops what this Host holds for a session the operator
// switched away from: its cached approvals and its MCP connections.
func (h *Host) ForgetSession(sessionID string) {
	h.approvals.InvalidateSession(sessionID)
	if err := h.mcp.EvictSession(context.Background(), sessionID); err != nil {
		h.logger.Warn("evict MCP session", "session_id", sessionID, "err", err)
	}
}
