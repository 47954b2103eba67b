package store

import (
	"context"
	"fmt"
	"hash/fnv"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// Wake-ups (demiurge.Topic*). A write transaction announces the topics of
// what it made ready when it commits; Subscribe hands them to the loops
// that wait for such work. On SQLite the announcement reaches the
// subscribers of this process only (the others poll); on PostgreSQL it is
// a NOTIFY on the ledger's channel, which every Host's listener hands to
// its own subscribers.

// wakes keeps the subscribers of each topic. A subscription is a channel of
// capacity 1: a wake-up that finds it full is already pending, so a burst
// of commits costs the subscriber one look.
type wakes struct {
	mu   sync.Mutex
	subs map[string]map[chan struct{}]struct{}
}

// Subscribe returns a channel that receives a value after a commit
// announced topic, and after the ledger's listener (re)connected (a
// notification may have been missed meanwhile). cancel ends the
// subscription. A subscriber still polls at its own pace: a wake-up is a
// hint that there is something to look at, never the only way to find it.
func (db *DB) Subscribe(topic string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	w := &db.wakes
	w.mu.Lock()
	if w.subs == nil {
		w.subs = map[string]map[chan struct{}]struct{}{}
	}
	if w.subs[topic] == nil {
		w.subs[topic] = map[chan struct{}]struct{}{}
	}
	w.subs[topic][ch] = struct{}{}
	w.mu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			w.mu.Lock()
			delete(w.subs[topic], ch)
			if len(w.subs[topic]) == 0 {
				delete(w.subs, topic)
			}
			w.mu.Unlock()
		})
	}
}

// fire wakes the subscribers of each topic.
func (w *wakes) fire(topics ...string) {
	if len(topics) == 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, topic := range topics {
		for ch := range w.subs[topic] {
			poke(ch)
		}
	}
}

// fireAll wakes every subscriber.
func (w *wakes) fireAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, subs := range w.subs {
		for ch := range subs {
			poke(ch)
		}
	}
}

// poke wakes a subscription unless a wake-up is already pending in it.
func poke(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// note records topic for announcement at commit.
func (t *wtx) note(topic string) {
	if t.notes == nil {
		t.notes = map[string]struct{}{}
	}
	t.notes[topic] = struct{}{}
}

// noteQueued records that task id was queued, announced under topic
// unless the same transaction also moves it on (unnoteQueued): a task
// submitted and started in one append wakes nobody.
func (t *wtx) noteQueued(id, topic string) {
	if t.queuedNotes == nil {
		t.queuedNotes = map[string]string{}
	}
	t.queuedNotes[id] = topic
}

func (t *wtx) unnoteQueued(id string) { delete(t.queuedNotes, id) }

// topics are the distinct topics to announce, sorted.
func (t *wtx) topics() []string {
	if len(t.notes) == 0 && len(t.queuedNotes) == 0 {
		return nil
	}
	set := map[string]struct{}{}
	for topic := range t.notes {
		set[topic] = struct{}{}
	}
	for _, topic := range t.queuedNotes {
		set[topic] = struct{}{}
	}
	out := make([]string, 0, len(set))
	for topic := range set {
		out = append(out, topic)
	}
	slices.Sort(out)
	return out
}

// announce queues a NOTIFY of each topic on PostgreSQL; the server
// delivers them when, and only if, the transaction commits.
func (t *wtx) announce(topics []string) error {
	if t.db.dialect.engine != Postgres || t.db.channel == "" {
		return nil
	}
	for _, topic := range topics {
		if _, err := t.exec(`SELECT pg_notify(?, ?)`, t.db.channel, topic); err != nil {
			return err
		}
	}
	return nil
}

// Listener reconnection backoff: from listenBackoffMin, doubling to
// listenBackoffMax while the server stays unreachable.
const (
	listenBackoffMin = 100 * time.Millisecond
	listenBackoffMax = 5 * time.Second
)

// listener is the PostgreSQL connection that LISTENs on the ledger's
// channel and hands each notification to this process's subscribers. It
// is owned by the DB: Close stops it and waits.
type listener struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// startListener listens on channel with a connection of its own, made
// from cfg, until stop. A lost connection is replaced with backoff; every
// subscriber is woken after each (re)connect, since notifications sent
// while it was away are lost.
func (db *DB) startListener(cfg *pgx.ConnConfig, channel string) *listener {
	ctx, cancel := context.WithCancel(context.Background())
	l := &listener{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(l.done)
		backoff := listenBackoffMin
		for ctx.Err() == nil {
			err := db.listen(ctx, cfg, channel, func() { backoff = listenBackoffMin })
			if ctx.Err() != nil {
				return
			}
			db.log.Warn("runtime store: listener lost its connection; reconnecting",
				"database", db.path, "retry_in", backoff.String(), "err", pgReason(err))
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(backoff*2, listenBackoffMax)
		}
	}()
	return l
}

// listen runs one listening connection until it fails or ctx ends;
// connected runs once it listens.
func (db *DB) listen(ctx context.Context, cfg *pgx.ConnConfig, channel string, connected func()) error {
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		conn.Close(cctx)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
		return err
	}
	connected()
	db.wakes.fireAll()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		db.wakes.fire(n.Payload)
	}
}

// stop ends the listener and waits for it.
func (l *listener) stop() {
	if l == nil {
		return
	}
	l.cancel()
	<-l.done
}

// ledgerChannel is the NOTIFY channel of the ledger in schema: one per
// schema, so ledgers that share a database never wake each other.
// A channel name is an identifier (at most 63 bytes): a longer schema name
// is replaced by its hash.
func ledgerChannel(schema string) string {
	ch := "demiurge." + schema
	if len(ch) <= 63 {
		return ch
	}
	h := fnv.New64a()
	h.Write([]byte(schema))
	return fmt.Sprintf("demiurge.%016x", h.Sum64())
}
