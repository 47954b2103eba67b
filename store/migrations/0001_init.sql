-- Runtime store schema, version 1.
-- Indexes serve the store's own bounded queries (plan_internal_test.go
-- checks them). Outbox lists order by rowid, which is queueing order, so the
-- outbox, the busiest projection, needs no created_at index.
-- The sixteen tables of the runtime control plane, plus hosts and
-- session_leases for multi-process Host coordination. Timestamps are TEXT in
-- demiurge.TimeLayout (fixed width, so text order is time order). JSON columns
-- end in _json.

CREATE TABLE runtime_events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  event_id TEXT NOT NULL UNIQUE,
  aggregate_type TEXT NOT NULL,
  aggregate_id TEXT NOT NULL,
  type TEXT NOT NULL,
  created_at TEXT NOT NULL,
  actor_json TEXT NOT NULL DEFAULT '{}',
  payload_json TEXT NOT NULL DEFAULT '{}',
  idempotency_key TEXT
);
CREATE INDEX idx_runtime_events_aggregate ON runtime_events(aggregate_type, aggregate_id, seq);
CREATE INDEX idx_runtime_events_idempotency ON runtime_events(idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE INDEX idx_runtime_events_type ON runtime_events(type, seq);

CREATE TABLE tasks (
  task_id TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  status TEXT NOT NULL,
  root_task_id TEXT,
  parent_task_id TEXT,
  owner_session_id TEXT,
  owner_turn_id TEXT,
  core_id TEXT,
  host_id TEXT,
  source_json TEXT NOT NULL DEFAULT '{}',
  notify_policy TEXT,
  result_ref TEXT,
  error_json TEXT NOT NULL DEFAULT '{}',
  created_at TEXT NOT NULL,
  started_at TEXT,
  completed_at TEXT,
  heartbeat_at TEXT
);
CREATE INDEX idx_tasks_owner_session ON tasks(owner_session_id, created_at);
CREATE INDEX idx_tasks_parent ON tasks(parent_task_id, created_at);
CREATE INDEX idx_tasks_status ON tasks(status, created_at);
CREATE INDEX idx_tasks_kind ON tasks(kind, created_at);
CREATE INDEX idx_tasks_created ON tasks(created_at);

CREATE TABLE task_logs (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  task_id TEXT NOT NULL,
  stream TEXT NOT NULL,
  text TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX idx_task_logs_task ON task_logs(task_id, seq);

CREATE TABLE task_dependencies (
  parent_task_id TEXT NOT NULL,
  child_task_id TEXT NOT NULL,
  dependency_policy TEXT,
  PRIMARY KEY (parent_task_id, child_task_id)
);

CREATE TABLE leases (
  resource_key TEXT PRIMARY KEY,
  task_id TEXT,
  worker_id TEXT,
  expires_at TEXT
);

CREATE TABLE approvals (
  approval_id TEXT PRIMARY KEY,
  task_id TEXT,
  capability TEXT,
  risk TEXT,
  status TEXT,
  request_json TEXT NOT NULL DEFAULT '{}',
  decision_json TEXT NOT NULL DEFAULT '{}',
  created_at TEXT,
  resolved_at TEXT
);

CREATE TABLE outbox (
  delivery_id TEXT PRIMARY KEY,
  owner_turn_id TEXT,
  channel TEXT,
  target_json TEXT NOT NULL DEFAULT '{}',
  status TEXT NOT NULL,
  idempotency_key TEXT,
  payload_json TEXT NOT NULL DEFAULT '{}',
  attempts INTEGER NOT NULL DEFAULT 0,
  last_error TEXT,
  host_id TEXT,
  created_at TEXT NOT NULL,
  sent_at TEXT
);
CREATE INDEX idx_outbox_turn ON outbox(owner_turn_id);
CREATE INDEX idx_outbox_status ON outbox(status);

CREATE TABLE sessions (
  session_id TEXT PRIMARY KEY,
  core_id TEXT NOT NULL,
  status TEXT NOT NULL,
  channel TEXT,
  target_json TEXT NOT NULL DEFAULT '{}',
  title TEXT,
  preview TEXT,
  message_count INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX idx_sessions_updated ON sessions(updated_at);
CREATE INDEX idx_sessions_core ON sessions(core_id, updated_at);

CREATE TABLE turns (
  turn_id TEXT PRIMARY KEY,
  session_id TEXT NOT NULL,
  status TEXT NOT NULL,
  input_ref TEXT,
  result_ref TEXT,
  core_id TEXT,
  core_revision TEXT,
  host_id TEXT,
  error_json TEXT NOT NULL DEFAULT '{}',
  created_at TEXT NOT NULL,
  completed_at TEXT
);
CREATE INDEX idx_turns_session ON turns(session_id, created_at);
CREATE INDEX idx_turns_running ON turns(host_id) WHERE status = 'running';

CREATE TABLE messages (
  message_id TEXT PRIMARY KEY,
  session_id TEXT NOT NULL,
  turn_id TEXT,
  role TEXT NOT NULL,
  visibility TEXT NOT NULL,
  kind TEXT NOT NULL DEFAULT 'message',
  model_visible INTEGER NOT NULL DEFAULT 1,
  content_json TEXT NOT NULL DEFAULT '{}',
  created_at TEXT NOT NULL,
  runtime_seq INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX idx_messages_session ON messages(session_id, runtime_seq);

CREATE TABLE tool_calls (
  call_id TEXT PRIMARY KEY,
  turn_id TEXT,
  step_id TEXT,
  tool_name TEXT NOT NULL,
  status TEXT NOT NULL,
  args_json TEXT NOT NULL DEFAULT '{}',
  result_json TEXT NOT NULL DEFAULT '{}',
  created_at TEXT NOT NULL,
  completed_at TEXT
);
CREATE INDEX idx_tool_calls_turn ON tool_calls(turn_id, created_at);

CREATE TABLE artifacts (
  artifact_id TEXT PRIMARY KEY,
  owner_turn_id TEXT,
  kind TEXT NOT NULL,
  uri TEXT NOT NULL,
  metadata_json TEXT NOT NULL DEFAULT '{}',
  created_at TEXT NOT NULL
);

CREATE TABLE scheduler_instances (
  core_id TEXT NOT NULL,
  schedule_id TEXT NOT NULL,
  due_at TEXT NOT NULL,
  task_id TEXT,
  claim_status TEXT NOT NULL,
  idempotency_key TEXT,
  claim_id TEXT,
  lease_expires_at TEXT,
  PRIMARY KEY (core_id, schedule_id, due_at)
);
CREATE INDEX idx_scheduler_claim ON scheduler_instances(claim_status, lease_expires_at);

CREATE TABLE runtime_work_items (
  work_id TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  status TEXT NOT NULL,
  owner_session_id TEXT,
  owner_turn_id TEXT,
  parent_work_id TEXT,
  claim_id TEXT,
  owner_id TEXT,
  claimed_at TEXT,
  lease_expires_at TEXT,
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at TEXT,
  last_error TEXT,
  external_ref TEXT,
  payload_json TEXT NOT NULL DEFAULT '{}',
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  completed_at TEXT
);
CREATE INDEX idx_runtime_work_due ON runtime_work_items(kind, status, next_attempt_at, lease_expires_at);
CREATE INDEX idx_runtime_work_owner_session ON runtime_work_items(owner_session_id, created_at);
CREATE INDEX idx_runtime_work_status ON runtime_work_items(status);

CREATE TABLE session_bindings (
  core_id TEXT NOT NULL,
  channel TEXT NOT NULL,
  conversation_key TEXT NOT NULL,
  session_id TEXT NOT NULL,
  created_at TEXT,
  updated_at TEXT,
  PRIMARY KEY (core_id, channel, conversation_key)
);
CREATE INDEX idx_session_bindings_session ON session_bindings(session_id);

CREATE TABLE session_owners (
  session_id TEXT PRIMARY KEY,
  owner_kind TEXT NOT NULL,
  principal_id TEXT NOT NULL,
  channel TEXT,
  conversation_key TEXT,
  origin_session_id TEXT,
  origin_turn_id TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX idx_session_owners_principal ON session_owners(principal_id, updated_at);
CREATE INDEX idx_session_owners_route ON session_owners(channel, conversation_key);

CREATE TABLE hosts (
  host_id TEXT PRIMARY KEY,
  pid INTEGER NOT NULL,
  start_marker TEXT,
  hostname TEXT,
  started_at TEXT NOT NULL,
  heartbeat_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  stopped_at TEXT
);

CREATE TABLE session_leases (
  session_id TEXT PRIMARY KEY,
  holder TEXT NOT NULL,
  host_id TEXT NOT NULL,
  acquired_at TEXT NOT NULL
);
CREATE INDEX idx_session_leases_host ON session_leases(host_id);
