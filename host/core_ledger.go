package host

import (
	"context"

	"github.com/demiurge/demiurge/corerepo"
	"github.com/demiurge/demiurge/process"
	"github.com/demiurge/demiurge/store"
)

// coreLedger is the shared record of the core repository on the runtime
// database db (corerepo.Ledger): the store itself on PostgreSQL, where the
// Hosts of one ledger run on several machines, each with its own runtime
// home and core repository; none on SQLite, where every process of the
// one home shares its core repository already.
func coreLedger(db *store.DB) corerepo.Ledger {
	if db == nil || db.Engine() != store.Postgres {
		return nil
	}
	return db
}

// HomeRepo is the core repository of a runtime home opened without the
// Host (the `core` commands, `setup model`): when the home's runtime
// database is PostgreSQL it holds the store open as the repository's
// Ledger, so what it saves, promotes or rolls back is what every Host of
// the ledger runs next, and it starts from the shared live revision.
// Close closes both.
type HomeRepo struct {
	*corerepo.Repo
	db *store.DB
}

// OpenHomeRepo opens (or creates) the core repository of the initialised
// home dir, with the runtime database Database names (getenv: the
// environment, for DEMIURGE_DATABASE_URL) as its Ledger when that is
// PostgreSQL. config.yaml is read only when the environment names no
// database.
func OpenHomeRepo(ctx context.Context, dir string, getenv func(string) string) (*HomeRepo, error) {
	home := Home{Dir: dir}
	var cfg Config
	if getenv == nil || getenv(DatabaseURLEnv) == "" {
		var err error
		if cfg, err = LoadConfig(home.ConfigPath()); err != nil {
			return nil, err
		}
	}
	where, err := Database(home, cfg, getenv)
	if err != nil {
		return nil, err
	}
	out := &HomeRepo{}
	if store.IsDatabaseURL(where) {
		if out.db, err = store.Open(ctx, where, store.Options{ProcessAlive: process.Alive}); err != nil {
			return nil, err
		}
	}
	out.Repo, err = openRepoWith(ctx, dir, corerepo.Options{Ledger: coreLedger(out.db)})
	if err != nil {
		if out.db != nil {
			out.db.Close()
		}
		return nil, err
	}
	return out, nil
}

// Close releases the repository's watch and closes the runtime database
// it was opened with.
func (r *HomeRepo) Close() error {
	err := r.Repo.Close()
	if r.db != nil {
		if cerr := r.db.Close(); err == nil {
			err = cerr
		}
	}
	return err
}
