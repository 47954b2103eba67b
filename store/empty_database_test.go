package store

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestEmptyDatabaseIsTheSchema checks that the embedded empty database
// is the database the migrations make, header included, and empty; with
// -update it writes it afresh from the migrations.
func TestEmptyDatabaseIsTheSchema(t *testing.T) {
	sqliteOnly(t)
	chain := openRaw(t, "chain.sqlite3")
	applyMigrations(t, chain)
	if *updateSnapshot {
		if err := os.WriteFile("empty.sqlite3", buildEmptyDatabase(t), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Log("empty.sqlite3 rewritten; run again without -update")
		return
	}
	path := filepath.Join(t.TempDir(), "empty.sqlite3")
	if err := os.WriteFile(path, []byte(emptyDatabase), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := sql.Open("sqlite", dsn(path, "mode=ro"))
	if err != nil {
		t.Fatal(err)
	}
	defer got.Close()
	if want, have := describeSchema(t, chain), describeSchema(t, got); want != have {
		t.Fatalf("empty.sqlite3 differs from the migrations; rewrite it with\n\tgo test ./store -run 'TestSchemaSnapshotMatchesMigrations|TestEmptyDatabaseIsTheSchema' -update\n--- migrations:\n%s\n--- empty.sqlite3:\n%s", want, have)
	}
	for q, want := range map[string]string{
		"PRAGMA application_id":  fmt.Sprint(ApplicationID),
		"PRAGMA user_version":    fmt.Sprint(SchemaVersion()),
		"PRAGMA journal_mode":    "wal",
		"PRAGMA integrity_check": "ok",
	} {
		var v string
		if err := got.QueryRow(q).Scan(&v); err != nil || v != want {
			t.Errorf("%s = %q, %v; want %q", q, v, err, want)
		}
	}
	rows, err := got.Query(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, name)
	}
	rows.Close()
	for _, name := range tables {
		var n int
		if err := got.QueryRow(`SELECT count(*) FROM "` + name + `"`).Scan(&n); err != nil || n != 0 {
			t.Errorf("table %s holds %d rows (%v); the empty database must hold none", name, n, err)
		}
	}
}

// buildEmptyDatabase makes the empty database from the migrations, as one
// file with no log beside it.
func buildEmptyDatabase(t *testing.T) []byte {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "empty.sqlite3")
	db, err := sql.Open("sqlite", dsn(path, "_journal_mode=WAL"))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	applyMigrations(t, db)
	for _, q := range []string{
		fmt.Sprintf("PRAGMA application_id = %d", ApplicationID),
		fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion()),
		"VACUUM",
		"PRAGMA wal_checkpoint(TRUNCATE)",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// A new database file is the empty database: Open finds this build's
// schema in it and has nothing to migrate.
func TestOpenWritesTheEmptyDatabase(t *testing.T) {
	sqliteOnly(t)
	path := filepath.Join(t.TempDir(), "runtime", "runtime.sqlite3")
	if err := ensureFile(path); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != emptyDatabase {
		t.Fatalf("new database file is %d bytes, not the %d of the empty database", len(data), len(emptyDatabase))
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("new database file mode %v, %v; want 0600", fi.Mode().Perm(), err)
	}
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil || len(entries) != 1 {
		t.Fatalf("runtime directory holds %v (%v); want the database file alone", entries, err)
	}
	// An existing file is never replaced.
	if err := os.WriteFile(path, []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := ensureFile(path); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(path); string(data) != "mine" {
		t.Fatalf("ensureFile replaced an existing file: %q", data)
	}
}
