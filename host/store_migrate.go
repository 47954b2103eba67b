package host

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/process"
	"github.com/demiurge/demiurge/store"
)

// MigrateOptions configure MigrateStore.
type MigrateOptions struct {
	// Home is the runtime home whose SQLite ledger (runtime/runtime.sqlite3)
	// is copied; it must exist.
	Home string
	// To is the postgres:// URL of the target: an empty database, or one
	// whose ledger has no row yet (a schema of its own through search_path
	// works too).
	To string
	// Getenv reads the environment (default os.Getenv), only to tell
	// whether the home already points at To.
	Getenv func(string) string
}

// MigrateReport is what MigrateStore copied, and whether the home already
// uses the target.
type MigrateReport struct {
	store.CopyReport
	// ConfigPath is the home's config.yaml, where runtime.database points
	// the home at the target.
	ConfigPath string
	// HomeUsesTarget says that DEMIURGE_DATABASE_URL or runtime.database
	// already names To: the home's next command runs on the copy.
	HomeUsesTarget bool
}

// MigrateStore copies the SQLite ledger of a runtime home into an empty
// PostgreSQL database (store.CopyLedger: all or nothing, counts verified,
// refused while a Host of the home is alive or when the target has a row).
// It neither opens a Host nor changes the home: pointing the home at the
// copy (runtime.database, DEMIURGE_DATABASE_URL) is the operator's step,
// and until then the home keeps running on its SQLite file.
//
// Errors: ENOTFOUND when the home has no SQLite ledger; ECONFIG for a To
// that is not a postgres:// URL (not printed: it may hold a password), a
// server that cannot be reached or a target that is not empty; ESCHEMA for
// a database, on either side, that is not a Demiurge ledger or of a newer
// schema; ECONFLICT while a Host uses the home's ledger.
func MigrateStore(ctx context.Context, opts MigrateOptions) (MigrateReport, error) {
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if !store.IsDatabaseURL(opts.To) {
		return MigrateReport{}, demiurge.Errorf(demiurge.ECONFIG, "the target of a ledger migration must be a postgres:// URL")
	}
	dir, err := filepath.Abs(opts.Home)
	if err != nil {
		return MigrateReport{}, demiurge.WrapError(demiurge.ECONFIG, err, "runtime home %q is not usable", opts.Home)
	}
	home := Home{Dir: dir}
	rep := MigrateReport{ConfigPath: home.ConfigPath()}
	cfg, err := LoadConfig(home.ConfigPath())
	if err != nil {
		return rep, err
	}
	if where, err := Database(home, cfg, opts.Getenv); err == nil && where == opts.To {
		rep.HomeUsesTarget = true
	}
	if _, err := os.Stat(home.DBPath()); errors.Is(err, fs.ErrNotExist) {
		return rep, demiurge.Errorf(demiurge.ENOTFOUND, "%s has no SQLite ledger to migrate (no %s)", dir, home.DBPath())
	} else if err != nil {
		return rep, demiurge.WrapError(demiurge.EUNAVAILABLE, err, "stat %s: %s", home.DBPath(), demiurge.IOReason(err))
	}

	src, err := store.Open(ctx, home.DBPath(), store.Options{ProcessAlive: process.Alive})
	if err != nil {
		return rep, err
	}
	defer src.Close()
	dst, err := store.Open(ctx, opts.To, store.Options{ProcessAlive: process.Alive})
	if err != nil {
		return rep, err
	}
	defer dst.Close()
	rep.CopyReport, err = store.CopyLedger(ctx, src, dst)
	return rep, err
}
