package host_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/host"
	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/store"
)

func TestDatabaseSelection(t *testing.T) {
	home := host.Home{Dir: t.TempDir()}
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	if got, err := host.Database(home, host.Config{}, getenv); err != nil || got != home.DBPath() {
		t.Fatalf("unset: %q, %v; want the SQLite file", got, err)
	}
	cfg := host.Config{Runtime: host.RuntimeConfig{Database: "postgres://db.example/ledger"}}
	if got, _ := host.Database(home, cfg, getenv); got != cfg.Runtime.Database {
		t.Fatalf("config: %q", got)
	}
	env[host.DatabaseURLEnv] = "postgresql://u:pw@other/ledger"
	if got, _ := host.Database(home, cfg, getenv); got != env[host.DatabaseURLEnv] {
		t.Fatalf("the environment goes first: %q", got)
	}
	env[host.DatabaseURLEnv] = "mysql://u:pw@other/ledger"
	if _, err := host.Database(home, cfg, getenv); demiurge.ErrorCode(err) != demiurge.ECONFIG || strings.Contains(err.Error(), "pw") {
		t.Fatalf("not a postgres URL: %v", err)
	}
}

func TestConfigRefusesDatabaseThatIsNotAURL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte("runtime:\n  database: /var/lib/secret-pw\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := host.LoadConfig(path)
	if demiurge.ErrorCode(err) != demiurge.ECONFIG || strings.Contains(err.Error(), "secret-pw") {
		t.Fatalf("LoadConfig: %v", err)
	}
}

// DEMIURGE_DATABASE_URL opens the PostgreSQL engine in the composition
// root; a refused connection is one ECONFIG line without the password.
func TestOpenOnPostgres(t *testing.T) {
	url := demiurgetest.PostgresDatabase(t)
	ctx := context.Background()
	env := map[string]string{host.DatabaseURLEnv: url}
	h, err := host.Open(ctx, host.Options{Home: t.TempDir(), Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	if got := host.StoreOf(h).Engine(); got != store.Postgres {
		t.Fatalf("engine %s", got)
	}
	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}

	env[host.DatabaseURLEnv] = "postgres://alice:s3cret@127.0.0.1:1/ledger"
	_, err = host.Open(ctx, host.Options{Home: t.TempDir(), Getenv: func(k string) string { return env[k] }})
	if demiurge.ErrorCode(err) != demiurge.ECONFIG || strings.Contains(err.Error(), "s3cret") ||
		!strings.Contains(err.Error(), "127.0.0.1:1/ledger") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("refused: %v", err)
	}
}
