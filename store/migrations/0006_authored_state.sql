-- ctx.state.core and ctx.state.session: one JSON document per core and per
-- session, the projection of state.module_updated events.
CREATE TABLE authored_state (
  scope TEXT NOT NULL,
  owner_id TEXT NOT NULL,
  document_json TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  last_seq INTEGER NOT NULL,
  PRIMARY KEY (scope, owner_id)
) WITHOUT ROWID;
