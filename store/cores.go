package store

import (
	"context"
	"database/sql"

	"github.com/demiurge/demiurge"
)

// The shared live revision of the core repository and the revisions it
// names (corerepo's Ledger; doc.go, "Cores on several Hosts" of the
// architecture page).

var (
	sqlCoreLive = `SELECT revision, previous, op, host_id, last_seq, updated_at
  FROM core_live WHERE name = 'live'`
	sqlCoreRevision = `SELECT revision, parent, pack, objects FROM core_revisions WHERE revision = ?`
	sqlCoreHas      = `SELECT count(*) FROM core_revisions WHERE revision = ?`
	sqlCoreInsert   = `INSERT INTO core_revisions (revision, parent, pack, objects, host_id, created_at, last_seq)
  VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (revision) DO NOTHING`
	sqlCoreLiveSet = `INSERT INTO core_live (name, revision, previous, op, host_id, last_seq, updated_at)
  VALUES ('live', ?1, ?2, ?3, ?4, ?5, ?6)
  ON CONFLICT (name) DO UPDATE SET revision = ?1, previous = ?2, op = ?3, host_id = ?4, last_seq = ?5, updated_at = ?6`
)

func init() {
	on(projectCoreLiveChanged)
	// core.revision_published is an event only: PublishCore writes the
	// core_revisions row (the pack is no payload) beside it.
}

func projectCoreLiveChanged(t *wtx, e evMeta, p demiurge.CoreLiveChangedPayload) error {
	if p.Revision == "" || p.Op == "" {
		return demiurge.Errorf(demiurge.EINVALID, "%s requires revision and op", e.typ)
	}
	_, err := t.exec(sqlCoreLiveSet, p.Revision, nullable(p.Previous), p.Op, nullable(p.HostID), e.seq, e.stamp())
	return err
}

// CoreLive returns the shared live revision of the core repository; ok is
// false while no Host has published one. It is one read of one row by its
// key: what a Host pays before each turn to learn whether another Host
// moved the live revision.
func (db *DB) CoreLive(ctx context.Context) (live demiurge.CoreLive, ok bool, err error) {
	live, err = scanCoreLive(db.reader.QueryRowContext(ctx, sqlCoreLive))
	if isNoRows(err) {
		return demiurge.CoreLive{}, false, nil
	}
	if err != nil {
		return demiurge.CoreLive{}, false, db.codeError(ctx, err)
	}
	return live, true, nil
}

func scanCoreLive(r scanner) (demiurge.CoreLive, error) {
	var c demiurge.CoreLive
	var prev, host sql.NullString
	if err := r.Scan(&c.Revision, &prev, &c.Op, &host, &c.LastSeq, &c.UpdatedAt); err != nil {
		return c, err
	}
	c.Previous, c.HostID = prev.String, host.String
	return c, nil
}

// CoreRevision returns a published revision with its pack; ok is false
// when the ledger does not hold it.
func (db *DB) CoreRevision(ctx context.Context, revision string) (rev demiurge.CoreRevision, ok bool, err error) {
	var parent sql.NullString
	err = db.reader.QueryRowContext(ctx, sqlCoreRevision, revision).Scan(&rev.Revision, &parent, &rev.Pack, &rev.Objects)
	if isNoRows(err) {
		return demiurge.CoreRevision{}, false, nil
	}
	if err != nil {
		return demiurge.CoreRevision{}, false, db.codeError(ctx, err)
	}
	rev.Parent = parent.String
	return rev, true, nil
}

// PublishCore moves the shared live revision, in one write transaction:
// when the live revision is not p.Expected ("" : none published yet) it
// fails with ECONFLICT "shared core revision moved: expected <expected>,
// found <live>" and writes nothing; otherwise it stores each revision of
// p.Revisions the ledger lacks (a core_revisions row and a
// core.revision_published event), then sets live to the last of them
// (core.live_changed, whose projection is the core_live row) and returns
// it. A live revision that already is the last one is returned unchanged.
func (db *DB) PublishCore(ctx context.Context, p demiurge.CorePublication) (demiurge.CoreLive, error) {
	if len(p.Revisions) == 0 || p.Op == "" {
		return demiurge.CoreLive{}, demiurge.Errorf(demiurge.EINVALID, "core publication requires revisions and op")
	}
	target := p.Revisions[len(p.Revisions)-1].Revision
	var out demiurge.CoreLive
	err := db.write(ctx, func(t *wtx) error {
		cur, err := scanCoreLive(t.queryRow(sqlCoreLive))
		if err != nil && !isNoRows(err) {
			return err
		}
		if cur.Revision != p.Expected {
			return demiurge.Errorf(demiurge.ECONFLICT, "shared core revision moved: expected %s, found %s",
				orNone(p.Expected), orNone(cur.Revision))
		}
		if cur.Revision == target {
			out = cur
			return nil
		}
		for _, r := range p.Revisions {
			if err := t.storeCoreRevision(r, p.HostID); err != nil {
				return err
			}
		}
		ev := demiurge.NewEvent(demiurge.AggCore, demiurge.CoreLiveID, demiurge.CoreLiveChangedPayload{
			Revision: target, Previous: cur.Revision, Op: p.Op, HostID: p.HostID})
		if _, err := t.append([]demiurge.Event{ev}, "", nil); err != nil {
			return err
		}
		out, err = scanCoreLive(t.queryRow(sqlCoreLive))
		return err
	})
	return out, err
}

// storeCoreRevision stores r unless the ledger holds it.
func (t *wtx) storeCoreRevision(r demiurge.CoreRevision, hostID string) error {
	if r.Revision == "" || len(r.Pack) == 0 {
		return demiurge.Errorf(demiurge.EINVALID, "core revision requires revision and pack")
	}
	var n int
	if err := t.queryRow(sqlCoreHas, r.Revision).Scan(&n); err != nil || n > 0 {
		return err
	}
	ev := demiurge.NewEvent(demiurge.AggCore, demiurge.CoreLiveID, demiurge.CoreRevisionPublishedPayload{
		Revision: r.Revision, Parent: r.Parent, Objects: r.Objects, Bytes: len(r.Pack), HostID: hostID})
	stored, err := t.append([]demiurge.Event{ev}, "", nil)
	if err != nil {
		return err
	}
	_, err = t.exec(sqlCoreInsert, r.Revision, nullable(r.Parent), r.Pack, r.Objects, nullable(hostID), t.nowText(), stored[0].Seq)
	return err
}

func orNone(rev string) string {
	if rev == "" {
		return "(none)"
	}
	return rev
}
