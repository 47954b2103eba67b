package storebench

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"strconv"
	"strings"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver of the raw inserter

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/store"
)

// MeasurePostgresAppendRatio is MeasureAppendRatio on the PostgreSQL
// database dbURL names: Append against raw inserts of the same events into
// runtime_events of the same ledger, in a schema of its own that it drops
// at the end. The raw inserts run in one transaction per batch over one
// connection, as Append's do, without the store's write lock.
func MeasurePostgresAppendRatio(ctx context.Context, dbURL string, batches int) (ratio float64, appendPerSec, rawPerSec float64, err error) {
	admin, err := sql.Open("pgx", dbURL)
	if err != nil {
		return 0, 0, 0, err
	}
	defer admin.Close()
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "bench_" + hex.EncodeToString(b[:])
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		return 0, 0, 0, demiurge.WrapError(demiurge.EUNAVAILABLE, err, "create schema in %s", store.DescribeURL(dbURL))
	}
	defer admin.ExecContext(context.WithoutCancel(ctx), "DROP SCHEMA "+schema+" CASCADE")
	u, err := url.Parse(dbURL)
	if err != nil {
		return 0, 0, 0, err
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	where := u.String()

	db, err := store.Open(ctx, where, store.Options{})
	if err != nil {
		return 0, 0, 0, err
	}
	defer db.Close()
	raw, err := sql.Open("pgx", where)
	if err != nil {
		return 0, 0, 0, err
	}
	raw.SetMaxOpenConns(1)
	stmt, err := raw.PrepareContext(ctx, postgresPlaceholders(sqlInsertEvent))
	if err != nil {
		raw.Close()
		return 0, 0, 0, err
	}
	ins := &rawInserter{db: raw, stmt: stmt, noCheckpoint: true}
	defer ins.close()
	return measureRatio(ctx, db, ins, batches)
}

// postgresPlaceholders numbers the '?' of q as $1, $2, ….
func postgresPlaceholders(q string) string {
	var b strings.Builder
	n := 0
	for _, c := range q {
		if c == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}
