-- The ChannelInbox: one row per accepted inbound channel message, the
-- projection of channel_inbound.* events. (core_id, channel, event_key) is
-- the platform message's dedup key.
CREATE TABLE channel_inbox (
  inbound_id TEXT PRIMARY KEY,
  core_id TEXT NOT NULL,
  channel TEXT NOT NULL,
  event_key TEXT NOT NULL,
  conversation_key TEXT NOT NULL,
  principal_key TEXT NOT NULL,
  source TEXT,
  reply_to TEXT,
  text TEXT NOT NULL,
  metadata_json TEXT NOT NULL DEFAULT '{}',
  status TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  claim_id TEXT,
  host_id TEXT,
  turn_id TEXT,
  session_id TEXT,
  result TEXT,
  last_error TEXT,
  next_attempt_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  last_seq INTEGER NOT NULL
);
CREATE UNIQUE INDEX channel_inbox_dedup ON channel_inbox (core_id, channel, event_key);
CREATE INDEX channel_inbox_due ON channel_inbox (status, next_attempt_at, last_seq);
CREATE INDEX channel_inbox_conversation ON channel_inbox (core_id, channel, conversation_key, status);

-- The running channels of the gateways: one row per (core, channel), the
-- poller lease (host_id, lease_expires_at), the source cursor (a Telegram
-- offset) and the state gateway status reports. Written beside events, like
-- the hosts table: a lease renewal is no event.
CREATE TABLE channel_states (
  core_id TEXT NOT NULL,
  channel TEXT NOT NULL,
  type TEXT NOT NULL,
  host_id TEXT,
  state TEXT NOT NULL,
  last_error TEXT,
  cursor TEXT,
  lease_expires_at TEXT,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (core_id, channel)
) WITHOUT ROWID;
