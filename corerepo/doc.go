// Package corerepo is the core repository and the self-evolution workflow
// (spec host-runtime §7.3–§7.4): every revision of the agents tree is a
// commit, the live checkout is <home>/agents, local edits are gated and
// committed before a turn uses them, and an evolver proposes changes in an
// isolated run tree that only promotion, after gates and, where needed,
// the operator's token, makes live.
//
// It composes two packages and decides nothing they decide: the git
// storage (gitrepo: objects, refs, checkouts, the journalled switch, the
// lock, the consistency check) stores, and the gates (coregate: gates,
// security review, secret-safe diff, confirmation tokens) judge. Neither
// knows the other; this package reads a scan from the storage, hands it
// to the gates and, when they pass, commits and switches.
//
// # Layout (HomePaths)
//
//	<home>/agents/                      live checkout (Paths.Agents)
//	<home>/runtime/core.git/            bare repository (Paths.GitDir; gitrepo's layout)
//	    refs/demiurge/runs/<run_id>     a reviewed evolve proposal
//	<home>/runtime/core.lock            mutation lock (Paths.Lock)
//	<home>/runtime/host.key             Host secret key, 0600 (Paths.HostKey)
//	<home>/runtime/evolve/<run_id>/     run tree agents/, request.json, result.json,
//	                                    review.json, proposal.json, gates.json, report.md
//
// # Usage
//
// Init creates the repository with its baseline (below) as the first live
// revision, or opens an existing one; Open opens one. Before every turn the
// Host calls EnsureSaved: it returns the live revision (the turn's
// core_revision), saving local edits first. Status, Diff, Save, Discard,
// Versions, Live, Previous and Rollback serve `demiurge core …`; StartRun
// (then Run.Finish), Review, Promote and DiscardRun serve `demiurge core
// evolve …` and the evolve_core tool. Check returns the consistency
// findings (core.* codes) for doctor; Repair fixes the ones a safe fix
// exists for. Promote and Rollback return the affected core ids, and
// Options.OnSwitch receives them, so cached approvals of those cores can
// be dropped.
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
// # Saves and proposals
//
// A local save runs coregate's local gates on the scan of the live
// checkout against live; a failure is ECONFIG "local agent edits failed
// gates: <phase>: <detail>; …" with a *coregate.GateError cause, and
// nothing is committed. Save, the operator's command, puts a fresh token
// in a refusal that needs confirmation ("run `demiurge core save --confirm
// <token>`"); EnsureSaved, which can reach a model through a turn, only
// names the command. A review commits the run tree as the run's proposal
// and runs coregate's proposal review against the run's base: Promote
// needs a valid review token when it asks for manual review, and any later
// edit of the run tree makes a new proposal, which the old token does not
// confirm. The files written to the run directory (review.json,
// gates.json, report.md, promote.json) never hold the token. Untracked
// Python caches and runtime directories are removed from a run tree before
// review (cleaned_artifacts); other artifacts fail.
//
// # Concurrency
//
// A Repo is safe for concurrent use. Mutations (Save, Discard, Promote,
// Rollback, EnsureTemplateCore, Repair, the save inside EnsureSaved) take
// the storage's lock without blocking: a busy lock is ECONFLICT "core
// repository is locked: <path>", in this process and across processes
// (EnsureSaved alone waits up to two seconds, Init up to ten). Of two
// concurrent promotions one wins and the other gets ECONFLICT (locked, or
// "stale core proposal: …"). One evolve start per core runs at a time
// across processes (ECONFLICT "evolve already running for core: <id>"); a
// run is held by its Run until Finish or Close, and Review, Promote and
// DiscardRun refuse a held run. Reads (Status, Diff, Versions, Check,
// EnsureSaved without edits) take no lock.
//
// # Several Hosts
//
// With Options.Ledger (the runtime ledger on PostgreSQL, wired by the
// composition root) the repository follows a shared live revision that
// the Hosts of that ledger, each with its own home, move together; this
// repository is then a cache of the ledger, which holds every published
// revision as a git pack (gitrepo Pack) and the shared live revision.
//
//   - EnsureSaved reads the shared live revision first (one read of one
//     row); when it is this repository's live revision and the checkout is
//     clean, that is the turn's revision, as on one Host.
//   - Every mutation takes the lock and follows first: while nothing is
//     published it publishes its live revision with its history (op
//     "init"; a Host that loses that race follows the winner); when the
//     shared revision moved it imports the revisions it lacks and switches
//     to it (op "adopt", journalled like any switch, checkout rewritten,
//     OnSwitch told of the changed cores).
//   - A save, promotion, rollback or template core publishes its new
//     revision (with every commit back to the revision it started from)
//     by compare-and-swap before it switches live here: losing to another
//     Host is ECONFLICT "core repository: the shared live revision moved
//     while this Host made its <op> (…); nothing was changed: try again".
//     A process that stops between the two follows the shared revision at
//     its next call.
//   - Unsaved local edits when the shared revision moved are refused, not
//     saved on top of it nor merged: ECONFLICT "local agent edits were
//     made on core revision <old>, but another Host moved the shared live
//     revision to <new>: [paths]; … run `demiurge core discard --yes` …",
//     unless the checkout already holds the shared revision's files.
//     Discard restores them and follows. Follow is the follow alone (a
//     Host runs it when it opens).
//
// Revisions read from the ledger are not gated again: the Host that
// published one judged it, and the ledger is as trusted as the home.
// Confirmation tokens stay per Host (each home's key).
//
// # Failure modes
//
// Saves, promotions and rollbacks switch live through the storage's
// journalled transaction: a process that dies anywhere leaves live old or
// new, and Open and the next mutation finish or undo it (tested by killing
// a child process at each step, Options.CrashPoint). Mutations refuse an
// inconsistent repository with ECONFLICT "core repository consistency
// check failed: <code>: <msg>; …"; revision switches refuse unsaved edits
// with the spec's "local agent edits must be saved or discarded before
// switching core revisions: […]; run `demiurge core save` or `demiurge
// core discard --yes`".
//
// # Limits
//
// The pinned revision is what EnsureSaved returned: a reader that loads a
// core while a promotion rewrites the checkout can see a mix (gitrepo's
// Limits).
package corerepo
