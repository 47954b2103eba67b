// Package corerepo is the core repository and the self-evolution engine
// (spec host-runtime §7.3–§7.4): every revision of the agents tree is a
// commit in a bare git repository, the live checkout is <home>/agents,
// local edits are gated and committed before a turn uses them, and an
// evolver proposes changes in an isolated run tree that only promotion,
// after gates and, where needed, the operator's token, makes live.
//
// Git is used through go-git's object storage only: nothing here runs
// git, hooks, filters, or any command named by repository configuration.
//
// # Layout (HomePaths)
//
//	<home>/agents/                      live checkout (Paths.Agents)
//	<home>/runtime/core.git/            bare repository (Paths.GitDir)
//	    refs/demiurge/live              the live revision
//	    refs/demiurge/previous          the live revision before the last switch
//	    refs/demiurge/runs/<run_id>     a reviewed evolve proposal
//	    demiurge/{checkout,live.index,txn.json}  checkout head, stat index, journal
//	<home>/runtime/core.lock            mutation lock (Paths.Lock)
//	<home>/runtime/host.key             Host secret key, 0600 (Paths.HostKey)
//	<home>/runtime/evolve/<run_id>/     run tree agents/, request.json, result.json,
//	                                    review.json, proposal.json, gates.json, report.md
//
// Commits are made as "Demiurge Host <demiurge@localhost>".
//
// # Usage
//
// Init creates the repository with its baseline (below) as the first live
// revision, or opens an existing one; Open opens one. Before every turn the Host calls EnsureSaved: it returns the live
// revision (the turn's core_revision), saving local edits first. Status,
// Diff, Save, Discard, Versions, Live, Previous and Rollback serve `demiurge
// core …`; StartRun (then Run.Finish), Review, Promote and DiscardRun serve
// `demiurge core evolve …` and the evolve_core tool. Check returns the
// consistency findings (core.* codes) for doctor; Repair fixes the ones a
// safe fix exists for. Promote and Rollback return the affected core ids,
// and Options.OnSwitch receives them, so cached approvals of those cores
// can be dropped.
//
// # Baseline
//
// The first revision of a repository is built from content the Host
// trusts, never from what the agents tree holds: the embedded templates
// (core.TemplateFS) of each template scope whose manifest is in the tree
// (agents/agent.yaml for the global fallback, <core>/agent.yaml for the
// assistant and evolver cores). Init does not read the tree's contents or
// change it; every file that differs from the baseline, is missing from
// it or is not in it is a local edit, and EnsureSaved gates it before the
// first turn like any other (a loosening needs the operator's token; a
// tightening or neutral edit is saved at once).
//
//   - A new home: init installed exactly the templates, so the tree equals
//     the baseline and the first turn runs without a prompt. An edit made
//     between `demiurge init` and that turn is judged against the
//     templates: a new grant is refused with the core, the key and
//     "run `demiurge core save` to confirm it".
//   - A tree with no repository (runtime/core.git deleted, a live ref
//     lost, a home of an older version): the same rule. For every path
//     the templates do not define the baseline is empty, so a core of the
//     operator's own is wholly a local edit and each of its grants needs
//     confirmation. Template files identical to the embedded ones are
//     accepted without confirmation; a changed template file is judged
//     against its template. This is deliberate: the templates are what a
//     new home runs with unconfirmed, so demanding a token for them would
//     confirm nothing the Host does not already trust, while everything
//     else, including a loosening confirmed in the deleted repository, is
//     judged again. Deleting the repository therefore forgets every
//     confirmation and launders none. (`demiurge core discard --yes` then
//     restores the templates and removes the cores they lack.)
//
// EnsureTemplateCore, which adds a template core the live revision lacks,
// commits the embedded files too; files the tree already held at that
// core's paths stay local edits.
//
// # Gates
//
// Local saves run path_safety (no links, special files, files over
// MaxFileBytes, nested .git or control characters in names), artifact
// (Python caches and compiled files, node_modules, virtual environments,
// runtime state directories), dependency (package manifests and lock files
// of pip, uv, poetry, npm, yarn, pnpm, go, cargo, bundler, composer),
// core_load:<core> for each changed core (core.Load; core_load:global for
// agents/agent.yaml), approval_security and cross_core_references
// (agents.spawn:<core> grants must name existing cores). A failure is
// ECONFIG "local agent edits failed gates: <phase>: <detail>; …" with a
// *GateError cause, and nothing is committed.
//
// Review runs path_safety, artifact, dependency, core_load:<core>…,
// mcp_security, approval_security, cross_core_references on the proposal
// against the run's base. mcp_security and approval_security pass but
// require manual review: the review then carries a secret-safe description
// (MCP summaries with environment and header names only, redacted
// arguments and URLs) and a review token (see Confirmation tokens) for
// exactly this proposal. Promote needs a valid one; any later edit of the
// run tree makes a new proposal, which the old token does not confirm.
// The files written to the run directory (review.json, gates.json,
// report.md, promote.json) never hold the token. Untracked Python caches
// and runtime directories are removed from a run tree before review
// (cleaned_artifacts); other artifacts fail.
//
// # Approval is never self-service
//
// An edit that loosens approval or grants authority needs the operator's
// token, for local saves (Save with SaveOptions.Confirm; Save's refusal
// prints "run `demiurge core save --confirm <token>`", EnsureSaved's, which
// can reach a model through a turn, only "run `demiurge core save` to
// confirm it") as for promotion.
// Judged from old and new files decoded with core's manifest types:
// approval default/tools/capabilities/risks moving to a looser policy
// (deny > prompt > auto; unset looser than all), an entry removed that was
// stricter than auto, a new entry looser than an entry it may shadow;
// new capability grants (capabilities.defaults, capabilities.slots, the
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
// check is constant-time; a refusal says why ("confirmation token does not
// confirm this change", "… is for changes to assistant, not evolver",
// "confirmation token expired at <time>; run `demiurge core save` again for
// a new one", "review token expired at …; run `demiurge core evolve review
// <run>` again for a new one") and, for a save, carries a fresh token.
//
// The key (HostKey) is 32 random bytes in Paths.HostKey (HomePaths:
// <home>/runtime/host.key, mode 0600), created on first use by an
// exclusive hard link of a private temporary file, so concurrent first
// uses agree, and read on every later use; Options.HostKey overrides it.
// A key file that is not a regular 32-byte file, or is readable by group
// or others, is ECONFIG "host key file <path> …" naming the fix, and is
// never replaced behind the operator's back (a new key voids outstanding
// tokens). The key never appears in output, logs, events, reports or
// errors; HostKey formats as "[host key]". Its secrecy rests on the
// runtime home being out of reach of commands, MCP servers and authored
// modules (the terminal sandbox).
//
// # Concurrency
//
// A Repo is safe for concurrent use. Mutations (Save, Discard, Promote,
// Rollback, EnsureTemplateCore, Repair, the save inside EnsureSaved) take
// the lock file without blocking: a busy lock is ECONFLICT "core
// repository is locked: <path>", in this process and across processes
// (EnsureSaved alone waits up to two seconds). Of two concurrent
// promotions one wins and the other gets ECONFLICT (locked, or "stale core
// proposal: …"). One evolve start per core runs at a time across
// processes (ECONFLICT "evolve already running for core: <id>"); a run is
// held by its Run until Finish or Close, and Review, Promote and
// DiscardRun refuse a held run. Reads (Status, Diff, Versions, Check,
// EnsureSaved without edits) take no lock.
//
// # Failure modes
//
// Switching live (save, promote, rollback) is a journalled transaction:
// journal, compare-and-swap of live, previous, checkout, checkout head,
// journal removed. A process that dies anywhere leaves live old or new;
// Open and the next mutation roll the journal back or forward, after
// which Check is clean (tested by killing a child process at each step).
// Refs and state files are replaced by rename, so readers never see a torn
// value. Nothing is fsynced: the guarantees hold across process crashes,
// not power loss. Mutations refuse an inconsistent repository with
// ECONFLICT "core repository consistency check failed: <code>: <msg>; …";
// revision switches refuse unsaved edits with the spec's "local agent
// edits must be saved or discarded before switching core revisions: […];
// run `demiurge core save` or `demiurge core discard --yes`".
//
// # Performance
//
// A stat index (size, mtime, ctime, inode per file, for the checkout's
// commit) lets a scan of an unchanged tree stat files without reading
// them; entries younger than the timestamp granularity are re-hashed.
// Objects are content-addressed loose objects; a save writes the changed
// blobs, the changed trees and one commit.
//
// # Limits
//
// The live checkout is rewritten file by file (each file atomically): a
// reader that loads a core while a promotion rewrites it can see a mix;
// the pinned revision is what EnsureSaved returned. Loose objects are
// never packed or collected.
package corerepo
