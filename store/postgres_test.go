package store_test

import (
	"context"
	"net/url"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/store"
)

// The PostgreSQL engine's own tests: what stands in for the SQLite file
// header (TestOpenSetsApplicationIDAndVersion, TestOpenRefuses*).

func postgresOnly(t *testing.T) {
	t.Helper()
	if demiurgetest.Engine() != store.Postgres {
		t.Skip("PostgreSQL only: runs in the PostgreSQL run of " + demiurgetest.EnvPostgres)
	}
}

func TestPostgresSchemaRow(t *testing.T) {
	postgresOnly(t)
	db := demiurgetest.MustOpenDB(t)
	if db.Engine() != store.Postgres || strings.Contains(db.Path(), "@") || !strings.HasPrefix(db.Path(), "postgres://") {
		t.Fatalf("engine %s path %s", db.Engine(), db.Path())
	}
	var appID, version int64
	if err := rawDB(t, db.OpenedWith()).QueryRow(`SELECT application_id, version FROM demiurge_schema`).Scan(&appID, &version); err != nil {
		t.Fatal(err)
	}
	if appID != store.ApplicationID || version != int64(store.SchemaVersion()) {
		t.Fatalf("application_id %#x version %d, want %#x %d", appID, version, store.ApplicationID, store.SchemaVersion())
	}
}

func TestPostgresRefusesNewerSchema(t *testing.T) {
	postgresOnly(t)
	where := demiurgetest.TestDatabase(t)
	db := demiurgetest.MustOpenPath(t, where, store.Options{})
	mustAppend(t, db, "", ev("test", "x", "test.event", nil))
	db.Close()
	if _, err := rawDB(t, where).Exec(`UPDATE demiurge_schema SET version = version + 1`); err != nil {
		t.Fatal(err)
	}
	_, err := store.Open(context.Background(), where, store.Options{})
	wantCode(t, err, demiurge.ESCHEMA)
	if !strings.Contains(err.Error(), "newer than this build supports") {
		t.Fatalf("error %v", err)
	}
}

func TestPostgresRefusesForeignSchema(t *testing.T) {
	postgresOnly(t)
	where := demiurgetest.TestDatabase(t)
	if _, err := rawDB(t, where).Exec(`CREATE TABLE someone_elses (id BIGINT)`); err != nil {
		t.Fatal(err)
	}
	_, err := store.Open(context.Background(), where, store.Options{})
	wantCode(t, err, demiurge.ESCHEMA)
	var n int
	if err := rawDB(t, where).QueryRow(`SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("tables after refusal: %d, %v", n, err)
	}
}

// A server that cannot be reached: one line naming host, port and
// database, never the password. (No server is needed.)
func TestPostgresUnreachable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := store.Open(ctx, "postgres://alice:s3cret@127.0.0.1:1/ledger?connect_timeout=5", store.Options{})
	wantCode(t, err, demiurge.ECONFIG)
	msg := err.Error()
	if !strings.Contains(msg, "postgres://127.0.0.1:1/ledger") || strings.Contains(msg, "s3cret") || strings.Contains(msg, "\n") {
		t.Fatalf("error %q: want one line naming 127.0.0.1:1/ledger without the password", msg)
	}
	_, err = store.Open(ctx, "postgres://alice:s3cret@127.0.0.1:notaport/ledger", store.Options{})
	if err == nil || strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("bad URL: %v", err)
	}
}

// The PostgreSQL schema has the tables, columns and indexes of the SQLite
// one (schema_postgres.sql beside schema_snapshot.sql); the indexes of
// PRIMARY KEY and UNIQUE constraints are named by each engine and left out.
func TestPostgresSchemaMatchesSQLite(t *testing.T) {
	postgresOnly(t)
	lite := demiurgetest.MustOpenPath(t, filepath.Join(t.TempDir(), "runtime.sqlite3"), store.Options{})
	pg := demiurgetest.MustOpenDB(t)
	describe := func(r rawConn, tables, columns, indexes string) map[string][]string {
		out := map[string][]string{}
		for _, q := range []struct{ key, sql string }{{"tables", tables}, {"indexes", indexes}} {
			rows, err := r.Query(q.sql)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var name string
				if err := rows.Scan(&name); err != nil {
					t.Fatal(err)
				}
				out[q.key] = append(out[q.key], name)
			}
			rows.Close()
		}
		for _, table := range out["tables"] {
			rows, err := r.Query(columns, table)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var name string
				if err := rows.Scan(&name); err != nil {
					t.Fatal(err)
				}
				if name != "rowid" {
					out[table] = append(out[table], name)
				}
			}
			rows.Close()
		}
		return out
	}
	want := describe(rawDB(t, lite.OpenedWith()),
		`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`,
		`SELECT name FROM pragma_table_info(?) ORDER BY name`,
		`SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_%' ORDER BY name`)
	got := describe(rawDB(t, pg.OpenedWith()),
		`SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()
  AND table_name <> 'demiurge_schema' ORDER BY table_name COLLATE "C"`,
		`SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ?
  ORDER BY column_name COLLATE "C"`,
		`SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND indexname NOT LIKE '%_pkey' AND indexname NOT LIKE '%_key'
  ORDER BY indexname COLLATE "C"`)
	for k := range want {
		if !reflect.DeepEqual(got[k], want[k]) {
			t.Errorf("PostgreSQL schema, %s:\n got %v\nwant %v", k, got[k], want[k])
		}
	}
	if len(got) != len(want) {
		t.Errorf("PostgreSQL schema has %d tables, SQLite %d", len(got)-2, len(want)-2)
	}
}

// A connection the server ends (a restart, an administrator) fails the
// statement in flight with EUNAVAILABLE and writes nothing of it; the next
// write and read run on new connections.
func TestPostgresReconnectsAfterConnectionLoss(t *testing.T) {
	postgresOnly(t)
	where := demiurgetest.TestDatabase(t)
	u, err := url.Parse(where)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	name := "demiurge_" + q.Get("search_path")
	q.Set("application_name", name)
	u.RawQuery = q.Encode()
	db := demiurgetest.MustOpenPath(t, u.String(), store.Options{})
	ctx := context.Background()
	mustAppend(t, db, "", ev("test", "x", "test.event", nil))
	if _, err := db.Events(ctx, demiurge.EventFilter{}); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := rawDB(t, where).QueryRow(`SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = ?`, name).Scan(&n); err != nil || n == 0 {
		t.Fatalf("terminated %d connections, %v", n, err)
	}
	_, err = db.Append(ctx, []demiurge.Event{ev("test", "x", "test.event", nil)}, "", nil)
	if err != nil && demiurge.ErrorCode(err) != demiurge.EUNAVAILABLE {
		t.Fatalf("append on a lost connection: %v", err)
	}
	t.Logf("append on the lost connection: %v", err)
	mustAppend(t, db, "", ev("test", "x", "test.event", nil))
	evs, err := db.Events(ctx, demiurge.EventFilter{})
	if err != nil {
		t.Logf("first read after the loss: %v", err)
		// database/sql retries a read once the driver reports its
		// connection bad; a second read must succeed.
		if evs, err = db.Events(ctx, demiurge.EventFilter{}); err != nil {
			t.Fatal(err)
		}
	}
	if len(evs) < 2 || len(evs) > 3 {
		t.Fatalf("%d events after the loss", len(evs))
	}
}
