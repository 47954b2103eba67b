package store

import "testing"

func TestToPostgres(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`SELECT a FROM t WHERE b = ? AND c = ?`, `SELECT a FROM t WHERE b = $1 AND c = $2`},
		{`UPDATE t SET a = ?2 WHERE b = ?1 AND c = ?2`, `UPDATE t SET a = $2 WHERE b = $1 AND c = $2`},
		{`SELECT '?' || "a?b" FROM t WHERE x = ?`, `SELECT '?' || "a?b" FROM t WHERE x = $1`},
		{`SELECT seq FROM runtime_events INDEXED BY idx_runtime_events_aggregate WHERE seq > ?`, `SELECT seq FROM runtime_events WHERE seq > $1`},
		{"INSERT OR IGNORE INTO t\n  (a, b) VALUES (?, ?)", "INSERT INTO t\n  (a, b) VALUES ($1, $2) ON CONFLICT DO NOTHING"},
		{"INSERT OR REPLACE INTO artifacts\n  (artifact_id, kind) VALUES (?, ?)",
			"INSERT INTO artifacts\n  (artifact_id, kind) VALUES ($1, $2) ON CONFLICT (artifact_id) DO UPDATE SET kind = excluded.kind"},
		{"INSERT OR REPLACE INTO tasks (task_id, kind) VALUES (?, ?)",
			"INSERT INTO tasks (task_id, kind) VALUES ($1, $2) ON CONFLICT (task_id) DO UPDATE SET kind = excluded.kind, " +
				"log_lines = DEFAULT, cancel_requested_at = DEFAULT, cancel_reason = DEFAULT, process_pid = DEFAULT, " +
				"process_marker = DEFAULT, completion_work_id = DEFAULT, claim_host_id = DEFAULT, claim_expires_at = DEFAULT"},
	} {
		if got := toPostgres(tt.in); got != tt.want {
			t.Errorf("toPostgres(%q)\n got %q\nwant %q", tt.in, got, tt.want)
		}
	}
	if d := newDialect(SQLite); d.sql("SELECT ?") != "SELECT ?" {
		t.Fatal("SQLite statements must run as written")
	}
}

func TestDescribeURLHidesSecrets(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u:secret@db.example:6543/ledger?sslmode=disable": "postgres://db.example:6543/ledger",
		"postgresql://u@127.0.0.1/":                                  "postgres://127.0.0.1:5432/u",
	} {
		if got := DescribeURL(in); got != want {
			t.Errorf("DescribeURL(%q) = %q, want %q", in, got, want)
		}
	}
}
