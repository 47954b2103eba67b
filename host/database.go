package host

import (
	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/store"
)

// DatabaseURLEnv names the PostgreSQL database of the runtime ledger,
// ahead of config.yaml's runtime.database. The password belongs here (or
// in PGPASSWORD / ~/.pgpass), not in config.yaml.
const DatabaseURLEnv = "DEMIURGE_DATABASE_URL"

// Database returns where the runtime ledger of home lives: the postgres://
// URL of DEMIURGE_DATABASE_URL, else that of runtime.database in
// config.yaml, else the SQLite file home.DBPath(). A value that is not a
// postgres:// or postgresql:// URL fails with ECONFIG (the value itself is
// not printed: it may hold a password).
func Database(home Home, cfg Config, getenv func(string) string) (string, error) {
	if getenv != nil {
		if v := getenv(DatabaseURLEnv); v != "" {
			if !store.IsDatabaseURL(v) {
				return "", demiurge.Errorf(demiurge.ECONFIG, "%s must be a postgres:// URL", DatabaseURLEnv)
			}
			return v, nil
		}
	}
	if cfg.Runtime.Database != "" {
		return cfg.Runtime.Database, nil
	}
	return home.DBPath(), nil
}

// DatabaseName is where, for messages: the file, or the database as
// postgres://host:port/name without user or password.
func DatabaseName(where string) string {
	if store.IsDatabaseURL(where) {
		return store.DescribeURL(where)
	}
	return where
}
