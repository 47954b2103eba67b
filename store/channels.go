package store

import (
	"context"
	"time"

	"github.com/demiurge/demiurge"
)

var (
	sqlChannelCursor = `UPDATE channel_states SET cursor = ?1, updated_at = ?2
  WHERE core_id = ?3 AND channel = ?4 AND host_id = ?5`
	sqlChannelByKey = `SELECT core_id, channel, type, host_id, state, last_error, cursor, lease_expires_at, updated_at
  FROM channel_states WHERE core_id = ? AND channel = ?`
	sqlChannelUpsert = `INSERT INTO channel_states (core_id, channel, type, host_id, state, last_error, cursor,
  lease_expires_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, NULL, ?7, ?8)
  ON CONFLICT (core_id, channel) DO UPDATE SET type = ?3, host_id = ?4, state = ?5, last_error = ?6,
  lease_expires_at = ?7, updated_at = ?8`
)

// AcquireChannel takes (or renews) the lease on one channel of one core for
// hostID until now+ttl and records its state and last error (already
// redacted). ok is false, with nothing changed, while another Host that is
// alive holds an unexpired lease: two gateways on one home never poll the
// same channel. The stored cursor survives every change of holder.
func (db *DB) AcquireChannel(ctx context.Context, st demiurge.ChannelState, ttl time.Duration) (ok bool, err error) {
	if st.CoreID == "" || st.Channel == "" || st.HostID == "" {
		return false, demiurge.Errorf(demiurge.EINVALID, "a channel lease requires a core_id, a channel and a host id")
	}
	err = db.write(ctx, func(t *wtx) error {
		cur, err := scanChannel(t.queryRow(sqlChannelByKey, st.CoreID, st.Channel))
		switch {
		case isNoRows(err):
		case err != nil:
			return err
		case cur.HostID != "" && cur.HostID != st.HostID && cur.LeaseExpiresAt.After(t.now):
			live, err := t.hostAliveByID(cur.HostID)
			if err != nil || live {
				return err
			}
		}
		ok = true
		_, err = t.exec(sqlChannelUpsert, st.CoreID, st.Channel, st.Type, st.HostID, st.State, nullable(st.LastError),
			demiurge.FormatTime(t.now.Add(ttl)), t.nowText())
		return err
	})
	return ok, err
}

// ReleaseChannel gives up hostID's lease on a channel and records its final
// state; a lease another Host holds is left alone.
func (db *DB) ReleaseChannel(ctx context.Context, coreID, channel, hostID, state, lastError string) error {
	return db.write(ctx, func(t *wtx) error {
		_, err := t.exec(`UPDATE channel_states SET host_id = NULL, state = ?1, last_error = ?2, lease_expires_at = NULL,
  updated_at = ?3 WHERE core_id = ?4 AND channel = ?5 AND host_id = ?6`, state, nullable(lastError), t.nowText(), coreID, channel, hostID)
		return err
	})
}

// RecordChannel records the state of a channel no gateway runs (disabled,
// with its reason), keeping any lease and cursor.
func (db *DB) RecordChannel(ctx context.Context, st demiurge.ChannelState) error {
	return db.write(ctx, func(t *wtx) error {
		_, err := t.exec(`INSERT INTO channel_states (core_id, channel, type, state, last_error, updated_at)
  VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (core_id, channel) DO UPDATE SET type = ?3, state = ?4, last_error = ?5,
  updated_at = ?6 WHERE host_id IS NULL`, st.CoreID, st.Channel, st.Type, st.State, nullable(st.LastError), t.nowText())
		return err
	})
}

// Channel returns the state of one channel; ENOTFOUND when none was recorded.
func (db *DB) Channel(ctx context.Context, coreID, channel string) (demiurge.ChannelState, error) {
	c, err := scanChannel(db.reader.QueryRowContext(ctx, sqlChannelByKey, coreID, channel))
	if isNoRows(err) {
		return c, demiurge.Errorf(demiurge.ENOTFOUND, "channel not found: %s/%s", coreID, channel)
	}
	return c, db.codeError(ctx, err)
}

// Channels returns the recorded state of every channel, by core and name.
func (db *DB) Channels(ctx context.Context) ([]demiurge.ChannelState, error) {
	rows, err := db.reader.QueryContext(ctx, `SELECT core_id, channel, type, host_id, state, last_error, cursor,
  lease_expires_at, updated_at FROM channel_states ORDER BY core_id, channel`)
	if err != nil {
		return nil, db.codeError(ctx, err)
	}
	defer rows.Close()
	var out []demiurge.ChannelState
	for rows.Next() {
		c, err := scanChannel(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, db.codeError(ctx, rows.Err())
}

func scanChannel(r scanner) (demiurge.ChannelState, error) {
	var c demiurge.ChannelState
	var host, lastErr, cursor, lease ns
	var updated string
	if err := r.Scan(&c.CoreID, &c.Channel, &c.Type, &host, &c.State, &lastErr, &cursor, &lease, &updated); err != nil {
		return c, err
	}
	c.HostID, c.LastError, c.Cursor = host.String, lastErr.String, cursor.String
	c.LeaseExpiresAt, c.UpdatedAt = parseTime(lease), demiurge.ParseTime(updated)
	return c, nil
}

// ConversationSessions returns the sessions of coreID that scope's
// conversation owns (owner kind conversation, the same principal, channel
// and conversation key), newest first: what a channel's /sessions lists.
// A scope that is not a conversation's sees none.
func (db *DB) ConversationSessions(ctx context.Context, coreID string, scope demiurge.PrincipalScope, limit int) ([]demiurge.Session, error) {
	if scope.Authority != demiurge.AuthorityConversation || scope.PrincipalID == "" {
		return nil, nil
	}
	q := sessionSelect + ` WHERE s.core_id = ? AND o.owner_kind = ? AND o.principal_id = ? AND o.channel = ? AND o.conversation_key = ?
  ORDER BY s.updated_at DESC, s.rowid DESC LIMIT ?`
	return db.querySessions(ctx, q, coreID, demiurge.AuthorityConversation, scope.PrincipalID, scope.Channel,
		scope.ConversationKey, clampLimit(limit, demiurge.DefaultSessionLimit, demiurge.MaxSessionLimit))
}
