// Package mcp is the Host's MCP client runtime (spec tool-runtime §8): it
// reads a core's server declarations, connects to the servers a turn may
// use once connect authority is established, discovers their tools, and
// hands the effect runtime one catalog definition per tool whose adapter
// calls that tool on that connection.
//
// It sits in the tools layer: it imports the root vocabulary, policy,
// urlpolicy, redact, core (declarations root), effect (definitions,
// approvals) and process (which runs the stdio servers), and the official Go
// SDK (github.com/modelcontextprotocol/go-sdk). The composition root is
// its only importer.
//
// # Declarations
//
// LoadCore / LoadDeclarations read agent/mcp/<server_id>.yaml (and .yml),
// sorted by file name, strictly: unknown keys, wrong kinds, bad values
// fail with an ECONFIG error "invalid MCP server <rel>: [<rel>:<line>: ]
// <what>" naming the file, the line and the key. Each Declaration keeps
// the raw file and a fingerprint of it. Env and header values keep their
// ${NAME} references: they are interpolated from the Host environment
// only after connect approval (a missing variable fails the server with
// "missing environment variable: NAME" before any client exists). The URL
// is used as written; a ${NAME} in it is a declaration error.
//
// # Host variables
//
// Declaration.HostVariables names every ${NAME} of the env and header
// values and where it goes ("env LOG_LEVEL ← ${AWS_SECRET_ACCESS_KEY}"),
// never a value. The connect approval carries them (preview keys
// host_variables and exports, and one note per export), ServerStatus
// carries them (`demiurge mcp list|check`, text and JSON), and so does
// corerepo's review of a changed declaration. A name that looks like a
// credential (redact.CredentialVariable: AWS_SECRET_ACCESS_KEY,
// GITHUB_TOKEN, DB_PASSWORD, SSH_KEY, …) is exported only when the core
// grants secret.bind:<NAME> as a literal default (policy.Grants.CanExact;
// secret.bind:* grants none), the grant a terminal secret binding needs.
// Without it the server does not connect, in a turn and in Check alike,
// before any approval is asked or process spawned, and its status says
// why: `mcp server "x": env LOG_LEVEL references ${AWS_SECRET_ACCESS_KEY},
// which looks like a credential; grant secret.bind:AWS_SECRET_ACCESS_KEY
// in the core to export it`. Other names are exported as declared.
//
// # Turn preparation
//
//	defs, statuses := m.Definitions(ctx, mcp.Request{
//		Declarations: decls, Turn: tc, Gate: mcp.ApprovalGate(approvals),
//		CoreDir: core.Dir, CoreApproval: coreCfg, GlobalApproval: globalCfg,
//	})
//	catalog, err := effect.Prepare(effect.Sources{..., MCP: defs})
//
// Definitions runs before provider I/O and never fails the turn: a denied,
// failed or timed-out server contributes no tools and a ServerStatus
// saying why (the Host emits mcp.server_denied / mcp.server_failed from
// them). Per enabled server:
//
//   - a live connection with an unchanged declaration and connect policy
//     is reused (its tools listed again first if the server sent
//     notifications/tools/list_changed);
//   - a failure inside its negative TTL (30 s) is reused without a retry;
//   - otherwise, before any client is constructed or process spawned: the
//     capability mcp.connect:<id>, the secret.bind grant of each
//     credential-looking Host variable, the cwd inside the workspace, the URL
//     policy for HTTP servers, then the connect gate with policy
//     stricter(prompt, approval_policy) folded with the core and global
//     approval configuration (an "auto" declaration still prompts). A
//     denial is never cached; the next turn asks again.
//
// Authorised servers are discovered concurrently, at most
// MaxConcurrentConnects (4) at once across the whole Manager, each bounded
// by its connect_timeout_seconds ("MCP discovery timed out after <n>s");
// a slow or broken server never holds up its peers beyond its own timeout.
// Tools are filtered (tools.include / tools.exclude), tools whose input
// schema does not compile are left out (ServerStatus.Skipped), and names
// are <prefix>__<tool>, at most 64 characters, unique ignoring case;
// prefixes go to every enabled server in declaration order, so one
// server's failure never renames another's tools. A name that collides
// with a builtin or authored tool fails effect.Prepare naming both
// provenances ("mcp:<server>/<tool>").
//
// The returned definitions are frozen: each adapter closes over the
// connection its tool was listed on. There is no global name index; a
// list_changed notification only makes the next preparation list again.
//
// # Scopes, authority and eviction
//
// State is kept per scope (session, Host-issued child scope, core,
// workspace); scopes prepare concurrently, one preparation at a time
// within a scope. A scope's connections are bound to the principal, the
// capability snapshot and the core revision: any change closes them all.
// A changed declaration or effective connect policy closes only that
// server's connection and asks for approval again; a removed or disabled
// declaration closes its connection; no declarations at all evicts the
// scope. EvictSession and EvictScope (a delegated child's end) close the
// scope's connections and cancel its preparation in progress; other
// sessions are untouched.
//
// # Calls
//
// An MCP entry's capability is mcp.call:<id> (or the declared one) and its
// approval is the resolved entry's (action mcp.call, target
// <server>/<tool>), both enforced by the effect runtime before Invoke. A
// call is bounded by timeout_seconds and cancelled with the turn (the SDK
// sends notifications/cancelled); a lost connection answers "MCP server
// is not connected for tool: <name>" without running, other failures
// "MCP tool failed: <redacted error>". Results become text: structured
// content as indented JSON, text blocks joined by newlines, images, audio
// and resources as placeholders, bounded to MaxResultChars, isError
// mapped to Outcome.IsError. The values interpolated into a server's env
// and headers are added to the turn's secrets, so every view of every
// result is redacted with them.
//
// # Transports
//
// stdio: the command runs with exactly Options.BaseEnv (the allowlisted
// Host variables), HOME set to the server's private home (0700) and the
// declared variables; in the declared cwd or the workspace; as a server of
// the process manager (Options.Processes, the Host's own): leading its own
// session and process group, forked from one locked OS thread with
// SIGKILL as parent-death signal, its tree tracked, killed and reaped by
// that manager, which also drains its stderr. Closing gives it CloseGrace
// after stdin closes, then the manager terminates its tree (SIGTERM,
// SIGKILL) and reaps it; a server that exits on its own has its tree
// reaped at once. The first 12,000 characters of its stderr, redacted,
// are appended to <LogDir>/mcp-stderr.log (0600). Linux only: elsewhere
// stdio servers fail with EUNSUPPORTED.
//
// streamable_http: before the connect approval the URL gets the URL
// policy's literal check only (nothing is sent, not even a DNS query);
// every connection goes through the policy's transport (the host resolved
// and judged when each connection is opened, pinned to judged addresses,
// no proxy), every redirect is judged before it is followed, and the
// declared headers are sent to the declared origin only.
//
// # Concurrency and failure modes
//
// Manager is safe for concurrent use. It owns every goroutine it starts
// (connection watchers, closers) and Close waits for them; the process
// manager owns the servers' processes and the goroutines that watch them
// and drain their stderr; the SDK owns the goroutines inside a client
// session.
// Closing a connection cancels its calls first, so a hung call never holds
// up a close. Known limits: an unsandboxed stdio server's descendant that
// leaves the server's session and is orphaned before the process manager
// sees it escapes (see package process); a server that answers
// tools/list slowly delays its own discovery only; a call that times out
// is reported as a failed call (the effect runtime's timed_out status is
// reserved for its own deadline).
//
// # Testing
//
// Tests run the in-repo test server (internal/testserver, built by
// TestMain) in each fault mode, streamable HTTP servers on loopback, and
// the npm reference servers (testdata/interop: `npm ci --prefix
// mcp/testdata/interop`; skipped when absent, failed under CI).
// The bench driver's figures of discovery and catalog preparation are
// cmd/bench/internal/mcpbench.
package mcp
