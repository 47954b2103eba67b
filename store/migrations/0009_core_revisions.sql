-- Cores on several Hosts: the revisions of the core repository every Host
-- of this ledger follows, and the shared live revision (corerepo's Ledger).
-- core_revisions holds each published revision as a git pack of its
-- commit and of the objects of its tree that its parent's tree lacks
-- (parent NULL: every object; the first revision the ledger holds).
CREATE TABLE core_revisions (
  revision TEXT PRIMARY KEY,
  parent TEXT,
  pack BLOB NOT NULL,
  objects INTEGER NOT NULL,
  host_id TEXT,
  created_at TEXT NOT NULL,
  last_seq INTEGER NOT NULL
);

-- The shared live revision: one row (name 'live'), set by
-- core.live_changed with a compare-and-swap on revision.
CREATE TABLE core_live (
  name TEXT PRIMARY KEY,
  revision TEXT NOT NULL,
  previous TEXT,
  op TEXT NOT NULL,
  host_id TEXT,
  last_seq INTEGER NOT NULL,
  updated_at TEXT NOT NULL
);
