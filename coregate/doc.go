// Package coregate decides whether an edit of the agents tree may become a
// revision of the core repository (spec host-runtime §7.4): the gates, the
// security review of MCP declarations and approval configuration, the
// secret-safe diff, and the operator's confirmation tokens under the Host
// secret key. Its decisions are functions of the two trees (coretree) and
// their files' contents; the contents it does not hold in memory it reads
// through Blobs, the git storage. It stores nothing and moves no revision.
//
// # Gates
//
// An Edit is a new tree against a reference tree (Input). Local saves run
// LocalGates: path_safety (no links, special files, files over the
// storage's limit, nested .git or control characters in names), artifact
// (Python caches and compiled files, node_modules, virtual environments,
// runtime state directories), dependency (package manifests and lock files
// of pip, uv, poetry, npm, yarn, pnpm, go, cargo, bundler, composer),
// core_load:<core> for each changed core (core.Load; core_load:global for
// agents/agent.yaml), approval_security and cross_core_references
// (agents.spawn:<core> grants must name existing cores). A failure is
// Refusal: ECONFIG "local agent edits failed gates: <phase>: <detail>; …"
// with a *GateError cause.
//
// An evolve proposal runs ReviewProposal: path_safety, artifact,
// dependency, core_load:<core>…, mcp_security, approval_security,
// cross_core_references, against the run's base. mcp_security and
// approval_security pass but require manual review: the review then
// carries a secret-safe description (MCP summaries with environment and
// header names only, redacted arguments and URLs) and a review token for
// exactly this proposal. CleanableArtifact names the untracked artifacts a
// run tree is cleaned of before review.
//
// # Approval is never self-service
//
// An edit that loosens approval or grants authority needs the operator's
// token, for local saves (LocalApproval.Confirm; a refusal with
// LocalApproval.Issue prints "run `demiurge core save --confirm <token>`",
// one without, which can reach a model through a turn, only "run `demiurge
// core save` to confirm it") as for promotion. Judged from old and new
// files decoded with core's manifest types: approval
// default/tools/capabilities/risks moving to a looser policy (deny >
// prompt > auto; unset looser than all), an entry removed that was
// stricter than auto, a new entry looser than an entry it may shadow; new
// capability grants (capabilities.defaults, capabilities.slots, the
// capabilities of tool.yaml and slot.yaml); tools.metadata, tool.yaml and
// MCP declarations lowering approval_policy or risk or changing the
// required capability; a disabled tool re-enabled. The global fallback's
// approval section counts too. Local MCP edits that do not loosen need no
// token (connecting still needs mcp.connect:<id> and connect approval).
//
// # Confirmation tokens
//
// The tokens `demiurge core save --confirm` and `demiurge core evolve
// promote RUN --manual-review-token` take are
//
//	confirm-save:<cores>:<expiry>:<mac>     (SaveTokenPrefix, valid 1 hour)
//	mcp-review:<run_id>:<expiry>:<mac>      (TokenPrefix, valid 24 hours)
//
// with <cores> the cores the save's security changes touch (comma-separated,
// "global" for agents/agent.yaml), <expiry> UTC as 20060102T150405Z, and
// <mac> hex HMAC-SHA256, under the Host secret key, of the purpose, the
// subject, the expiry and what exactly is confirmed: for a save the live
// revision it is on, a digest of the exact tree it commits and a digest
// of its security changes; for a promotion the run's target core, base
// revision, proposal revision and security changes. Knowing every file and
// revision is not enough to make one: a token of one change confirms no
// other change, core, run or purpose, and is refused once expired. The
// check (Tokens.Check) is constant-time; a refusal (*TokenError) says why
// ("confirmation token does not confirm this change", "… is for changes to
// assistant, not evolver", "confirmation token expired at <time>; run
// `demiurge core save` again for a new one", "review token expired at …;
// run `demiurge core evolve review <run>` again for a new one").
//
// The key (HostKey) is 32 random bytes in a file (<home>/runtime/host.key,
// mode 0600), created on first use by an exclusive hard link of a private
// temporary file, so concurrent first uses agree, and read on every later
// use; NewTokens takes a key to use instead. A key file that is not a
// regular 32-byte file, or is readable by group or others, is ECONFIG
// "host key file <path> …" naming the fix, and is never replaced behind
// the operator's back (a new key voids outstanding tokens). The key never
// appears in output, logs, events, reports or errors; HostKey formats as
// "[host key]". Its secrecy rests on the runtime home being out of reach
// of commands, MCP servers and authored modules (the terminal sandbox).
//
// # Concurrency
//
// Tokens and HostKey are safe for concurrent use. An Edit is used by one
// goroutine: its core_load gates record the cores they loaded for
// cross_core_references.
package coregate
