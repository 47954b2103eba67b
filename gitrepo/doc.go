// Package gitrepo is the git storage of the core repository (spec
// host-runtime §7.3): a bare git repository whose refs name the live and
// the previous revision of the agents tree, the live checkout of that
// tree, and the journalled switch that moves live. It stores; it never
// judges what it stores (the gates, coregate) and never decides when to
// switch (the workflows, corerepo).
//
// Git is used through go-git's object storage only: nothing here runs
// git, hooks, filters, or any command named by repository configuration.
// Commits are made as "Demiurge Host <demiurge@localhost>".
//
// # Layout
//
//	<checkout>/                         live checkout (Paths.Checkout)
//	<git dir>/                          bare repository (Paths.GitDir)
//	    refs/demiurge/live              the live revision (RefLive)
//	    refs/demiurge/previous          the live revision before the last switch (RefPrevious)
//	    demiurge/{checkout,live.index,txn.json}  checkout head, stat index, journal
//	<lock>                              mutation lock (Paths.Lock)
//
// Callers may keep refs of their own beside these (SetRef, DeleteRef).
//
// # Usage
//
// New describes a repository that may not exist yet, Create makes it and
// Initialize commits its first live revision; Open opens an existing one.
// Scan compares a checkout (Checkout: a directory and its stat index; the
// live one is LiveCheckout) with a commit, and the Scan says what changed,
// what a commit of the checkout would hold (Proposed) and whether the
// files are still what it read (Unchanged). StoreTree and WriteCommit
// store objects without moving a ref; Switch moves live (and previous)
// and, for promote and rollback, brings the live checkout along. Sync and
// Restore rewrite a checkout, Record notes what it holds. Check returns
// the consistency findings (core.* codes) and Repair fixes the ones a safe
// fix exists for.
// Pack and ImportPack move revisions between repositories (the core
// repositories of several Hosts, through their shared ledger): a pack of a
// commit and of what its parent's tree lacks, imported as loose objects so
// that every process of the receiving repository reads them at once;
// HasCommit says whether a revision is stored.
//
// # Concurrency
//
// A Repo is safe for concurrent use. Mutations take the lock file without
// blocking (Lock, Begin: a busy lock is ECONFLICT "core repository is
// locked: <path>", in this process and across processes) or waiting a
// bounded time (LockWait). Begin also resolves a leftover transaction and
// refuses an inconsistent repository with ECONFLICT "core repository
// consistency check failed: <code>: <msg>; …". Reads (Scan, Files, Blob,
// Check) take no lock. Refs and state files are replaced by rename
// (internal/atomicfile), so readers never see a torn value.
//
// # Failure modes
//
// Switching live is a journalled transaction: journal, compare-and-swap of
// live, previous, checkout, checkout head, journal removed. A process that
// dies anywhere leaves live old or new; Open and the next Begin roll the
// journal back or forward, after which Check is clean (the core
// repository's crash tests kill a child process at each
// Options.CrashPoint). Nothing is fsynced: the guarantees hold across
// process crashes, not power loss.
//
// # Performance
//
// A stat index (size, mtime, ctime, inode per file, for the checkout's
// commit) lets a scan of an unchanged tree stat files without reading
// them; entries younger than the timestamp granularity are re-hashed.
// Objects are content-addressed loose objects; a save writes the changed
// blobs, the changed trees and one commit. Files of a commit are cached
// per tree.
//
// # Limits
//
// A checkout is rewritten file by file (each file atomically): a reader
// that loads a core while a promotion rewrites it can see a mix. Loose
// objects are never packed or collected. A file over MaxFileBytes is not
// read by a scan.
package gitrepo
