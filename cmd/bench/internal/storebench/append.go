// Package storebench measures the runtime store for the bench driver and
// its own Go benchmarks: Append (events and projections in one
// transaction) against raw inserts of the same rows, and the scaling of
// bounded task logs. Each measurement opens its own database in the
// directory it is given, replacing the file if present, and closes it
// before returning.
package storebench

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/store"
	_ "modernc.org/sqlite" // the "sqlite" driver the store uses
)

// BenchBatchSize is the number of events per batch in the append benchmark.
const BenchBatchSize = 100

// benchRound is the number of batches per timed phase of MeasureAppendRatio.
const benchRound = 20

// benchBatch returns BenchBatchSize events shaped like real turns: ten turns
// of turn.started, three messages, a tool call start and finish, an
// artifact, a queued delivery with its work item, and turn.completed. Each
// call makes fresh ids, so batches never collide.
func benchBatch(sessionID string) []demiurge.Event {
	evs := make([]demiurge.Event, 0, BenchBatchSize)
	add := func(agg, id string, p demiurge.EventPayload) {
		ev := demiurge.NewEvent(agg, id, p)
		ev.Actor = map[string]any{"actor": "host.turn"}
		evs = append(evs, ev)
	}
	yes := true
	msg := func(turnID, role, text string) {
		add(demiurge.AggMessage, demiurge.NewID("msg"), demiurge.MessagePersistedPayload{
			SessionID: sessionID, TurnID: turnID, Role: role,
			Content: &demiurge.MessageBody{Text: text, Kind: "message", ModelVisible: &yes, Channel: "cli"},
		})
	}
	for len(evs) < BenchBatchSize {
		turnID, callID, deliveryID := demiurge.NewID("turn"), demiurge.NewID("call"), demiurge.NewID("delivery")
		add(demiurge.AggTurn, turnID, demiurge.TurnStartedPayload{
			SessionID: sessionID, CoreID: "assistant", CoreRevision: "rev1", HostID: "host_bench"})
		msg(turnID, demiurge.RoleUser, "please list the files in the workspace and summarise them")
		add(demiurge.AggToolCall, callID, demiurge.ToolCallStartedPayload{
			TurnID: turnID, StepID: turnID + "_step_1", ToolName: "list_files", Args: map[string]any{"path": "."}})
		add(demiurge.AggToolCall, callID, demiurge.ToolCallCompletedPayload{
			Result: map[string]any{"content": "a.go\nb.go\nREADME.md", "is_error": false}})
		msg(turnID, demiurge.RoleTool, "a.go\nb.go\nREADME.md")
		msg(turnID, demiurge.RoleAssistant, "The workspace holds two Go files and a README.")
		add(demiurge.AggArtifact, demiurge.NewID("artifact"), demiurge.ArtifactStoredPayload{
			OwnerTurnID: turnID, Kind: "text", URI: "artifacts/" + turnID + ".txt"})
		add(demiurge.AggDelivery, deliveryID, demiurge.DeliveryQueuedPayload{
			OwnerTurnID: turnID, Channel: "cli", Target: map[string]any{"session_id": sessionID},
			Payload: map[string]any{"text": "The workspace holds two Go files and a README."}})
		add(demiurge.AggWork, deliveryID, demiurge.WorkEnqueuedPayload{
			Kind: demiurge.WorkKindDeliverySend, OwnerSessionID: sessionID, OwnerTurnID: turnID,
			Payload: map[string]any{"delivery_id": deliveryID}})
		add(demiurge.AggTurn, turnID, demiurge.TurnCompletedPayload{ResultRef: "msg"})
	}
	return evs[:BenchBatchSize]
}

// rawInserter writes events into runtime_events with no idempotency
// lookup and no projection: the baseline Append is measured against. It
// is a second connection to the database file with the store writer's
// settings (immediate transactions, WAL, synchronous NORMAL, the same
// cache), one transaction per batch and one prepared statement, as Append
// uses.
type rawInserter struct {
	db   *sql.DB
	stmt *sql.Stmt
	// noCheckpoint: a PostgreSQL database has no WAL file to copy.
	noCheckpoint bool
}

const sqlInsertEvent = `INSERT INTO runtime_events
  (event_id, aggregate_type, aggregate_id, type, created_at, actor_json, payload_json, idempotency_key)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?)`

func openRaw(ctx context.Context, path string) (*rawInserter, error) {
	u := url.URL{Path: path}
	db, err := sql.Open("sqlite", "file:"+u.EscapedPath()+"?_txlock=immediate&_pragma=busy_timeout(1000)&_pragma=foreign_keys(1)"+
		"&_pragma=cache_size(-16384)&_journal_mode=WAL&_synchronous=NORMAL")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	stmt, err := db.PrepareContext(ctx, sqlInsertEvent)
	if err != nil {
		db.Close()
		return nil, err
	}
	return &rawInserter{db: db, stmt: stmt}, nil
}

func (r *rawInserter) close() {
	r.stmt.Close()
	r.db.Close()
}

// insert writes events in one transaction, with the payloads NewEvent
// encoded, as Append stores them.
func (r *rawInserter) insert(ctx context.Context, events []demiurge.Event, key string) error {
	tx, err := r.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	stmt := tx.StmtContext(ctx, r.stmt)
	now := demiurge.FormatTime(time.Now().UTC())
	var idem any
	if key != "" {
		idem = key
	}
	for _, e := range events {
		actor, err := json.Marshal(e.Actor)
		if err != nil {
			return err
		}
		if err := e.EncodeErr(); err != nil {
			return err
		}
		body := e.Payload
		if len(body) == 0 {
			body = json.RawMessage("{}")
		}
		if _, err := stmt.ExecContext(ctx, demiurge.NewID("evt"), e.AggregateType, e.AggregateID, e.Type, now, string(actor), string(body), idem); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// checkpoint copies the WAL into the database file (a PASSIVE
// checkpoint, as the automatic ones are): a phase that ends with one pays
// for exactly the pages it wrote.
func (r *rawInserter) checkpoint(ctx context.Context) error {
	if r.noCheckpoint {
		return nil
	}
	_, err := r.db.ExecContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)")
	return err
}

// MeasureAppendRatio measures Append throughput against raw event inserts
// on one fresh database in dir (file append-ratio.sqlite3, replaced if
// present). It runs batches batches of BenchBatchSize events each way, in
// alternating rounds, and returns
// ratio = appendPerSec / rawPerSec with both rates in events per second.
func MeasureAppendRatio(ctx context.Context, dir string, batches int) (ratio float64, appendPerSec, rawPerSec float64, err error) {
	if batches <= 0 {
		batches = 20
	}
	path := filepath.Join(dir, "append-ratio.sqlite3")
	for _, s := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(path + s); err != nil && !os.IsNotExist(err) {
			return 0, 0, 0, demiurge.WrapError(demiurge.EUNAVAILABLE, err, "remove %s", path+s)
		}
	}
	db, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		return 0, 0, 0, err
	}
	defer db.Close()
	ins, err := openRaw(ctx, path)
	if err != nil {
		return 0, 0, 0, err
	}
	defer ins.close()
	return measureRatio(ctx, db, ins, batches)
}

// measureRatio times batches batches each way through db.Append and ins
// (see MeasureAppendRatio).
func measureRatio(ctx context.Context, db *store.DB, ins *rawInserter, batches int) (ratio float64, appendPerSec, rawPerSec float64, err error) {
	if batches <= 0 {
		batches = 20
	}
	sessionID, err := benchSession(ctx, db)
	if err != nil {
		return 0, 0, 0, err
	}
	// Warm both paths (statement caches, page cache) before timing.
	if _, err := db.Append(ctx, benchBatch(sessionID), "bench:warm", nil); err != nil {
		return 0, 0, 0, err
	}
	if err := ins.insert(ctx, benchBatch(sessionID), "bench:raw-warm"); err != nil {
		return 0, 0, 0, err
	}
	// Rounds of benchRound batches each way, alternating which goes first.
	// Each phase ends with a timed WAL checkpoint, so it pays for copying
	// exactly the pages it wrote (as the automatic checkpoints would, in
	// production), and alternating short rounds spread machine load and
	// database growth evenly over both.
	phase := func(n, round int, raw bool) (time.Duration, error) {
		start := time.Now()
		for i := range n {
			batch := benchBatch(sessionID)
			key := fmt.Sprintf("bench:%d:%d", round, i)
			var err error
			if raw {
				err = ins.insert(ctx, batch, key+":raw")
			} else {
				_, err = db.Append(ctx, batch, key, nil)
			}
			if err != nil {
				return 0, err
			}
		}
		if err := ins.checkpoint(ctx); err != nil {
			return 0, err
		}
		return time.Since(start), nil
	}
	var appendDur, rawDur time.Duration
	for round, done := 0, 0; done < batches; round++ {
		n := min(benchRound, batches-done)
		for _, raw := range []bool{round%2 == 1, round%2 == 0} {
			d, err := phase(n, round, raw)
			if err != nil {
				return 0, 0, 0, err
			}
			if raw {
				rawDur += d
			} else {
				appendDur += d
			}
		}
		done += n
	}
	n := float64(batches * BenchBatchSize)
	appendPerSec = n / appendDur.Seconds()
	rawPerSec = n / rawDur.Seconds()
	return appendPerSec / rawPerSec, appendPerSec, rawPerSec, nil
}

// benchSession creates the session the benchmark batches write to.
func benchSession(ctx context.Context, db *store.DB) (string, error) {
	id := demiurge.NewID("session")
	_, err := db.Append(ctx, []demiurge.Event{demiurge.NewEvent(demiurge.AggSession, id, demiurge.SessionCreatedPayload{
		CoreID: "assistant", Channel: "cli", SessionTarget: demiurge.SessionTarget{ConversationKey: "cli:bench:" + id},
		Owner: &demiurge.SessionOwnerPayload{Kind: demiurge.AuthorityOperator, PrincipalID: demiurge.OperatorPrincipalID},
	})}, "", nil)
	return id, err
}
