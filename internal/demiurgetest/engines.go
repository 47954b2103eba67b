package demiurgetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver

	"github.com/demiurge/demiurge/store"
)

// The conformance suite: a package whose TestMain calls RunEngines runs
// every test on SQLite and, when EnvPostgres names a PostgreSQL database,
// once more with EnvEngine=postgres, in which TestDatabase (and so
// MustOpenDB) hands each test a schema of its own in that database.
const (
	// EnvPostgres is the PostgreSQL database of the conformance suite,
	// e.g. postgres://postgres@127.0.0.1:5432/test. Unset: SQLite only.
	EnvPostgres = "DEMIURGE_TEST_POSTGRES"
	// EnvEngine is set to "postgres" in the second run of RunEngines.
	EnvEngine = "DEMIURGE_TEST_ENGINE"
)

// Engine is the engine this test process runs the store on.
func Engine() store.Engine {
	if os.Getenv(EnvEngine) == string(store.Postgres) {
		return store.Postgres
	}
	return store.SQLite
}

// SQLiteOnly skips a test in the PostgreSQL run: for tests of what only an
// SQLite file has (modes, WAL, checkpoints, application_id, query plans).
// why says which.
func SQLiteOnly(tb testing.TB, why string) {
	tb.Helper()
	if Engine() != store.SQLite {
		tb.Skip("SQLite only: " + why)
	}
}

// RunEngines runs the package's tests (m.Run) on SQLite, then, when
// EnvPostgres is set, runs this test binary again with the same flags and
// EnvEngine=postgres. It returns the exit code for os.Exit: non-zero when
// either run failed.
func RunEngines(m *testing.M) int {
	code := m.Run()
	if os.Getenv(EnvPostgres) == "" || Engine() == store.Postgres {
		return code
	}
	var args []string
	for _, a := range os.Args[1:] {
		// The parent owns its log and profiles; the child writes none.
		if strings.HasPrefix(a, "-test.testlogfile") || strings.HasPrefix(a, "-test.coverprofile") ||
			strings.HasPrefix(a, "-test.gocoverdir") || strings.HasSuffix(strings.SplitN(a, "=", 2)[0], "profile") {
			continue
		}
		args = append(args, a)
	}
	fmt.Println("== the same tests on PostgreSQL (" + EnvPostgres + ")")
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), EnvEngine+"="+string(store.Postgres))
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "PostgreSQL run:", err)
		return 1
	}
	return code
}

// TestDatabase returns where a test's runtime database lives: a path under
// a temporary directory (runtime/runtime.sqlite3, as a runtime home lays it
// out) or, in the PostgreSQL run, the URL of a new empty schema, dropped
// when the test ends. Several Opens of it share one ledger.
func TestDatabase(tb testing.TB) string {
	tb.Helper()
	if Engine() != store.Postgres {
		return filepath.Join(tb.TempDir(), "runtime", "runtime.sqlite3")
	}
	if os.Getenv(EnvPostgres) == "" {
		tb.Fatalf("%s=postgres needs %s", EnvEngine, EnvPostgres)
	}
	return PostgresDatabase(tb)
}

// PostgresDatabase returns the URL of a new empty schema in the database
// of EnvPostgres, dropped when the test ends, in either run; it skips the
// test when EnvPostgres is unset.
func PostgresDatabase(tb testing.TB) string {
	tb.Helper()
	base := os.Getenv(EnvPostgres)
	if base == "" {
		tb.Skip("needs a PostgreSQL database: set " + EnvPostgres)
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		tb.Fatalf("test database %s: %v", store.DescribeURL(base), err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "t_" + hex.EncodeToString(b[:])
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		admin.Close()
		tb.Fatalf("test database %s: create schema: %v", store.DescribeURL(base), err)
	}
	tb.Cleanup(func() {
		defer admin.Close()
		if _, err := admin.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			tb.Errorf("drop test schema %s: %v", schema, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		tb.Fatalf("%s: %v", EnvPostgres, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	// A test's commits need not survive a crash of the server: without
	// waiting for the flush, a test of thousands of commits takes seconds.
	q.Set("synchronous_commit", "off")
	u.RawQuery = q.Encode()
	return u.String()
}
