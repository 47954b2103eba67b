package store

import (
	_ "embed" // the empty database file
	"errors"
	"os"
	"path/filepath"
)

// emptyDatabase is a runtime database at this build's schema with nothing
// in it: the migrations applied, application_id and user_version set, in
// WAL mode, its log checkpointed into it. A new runtime database is
// written from it. Creating the schema instead costs SQLite a parse of
// every statement and a commit of every page it creates: the most costly
// step of a runtime home's first `demiurge run`. TestEmptyDatabaseIsTheSchema
// keeps it equal to the migrations (and rewrites it with -update).
//
//go:embed empty.sqlite3
var emptyDatabase string

// createEmpty creates path holding emptyDatabase, unless a file is there
// already (another opener's, created meanwhile, is kept as it is). The
// copy is written whole and synced under a temporary name before it is
// linked to path, so path never names a part of it. It reports
// errors.ErrUnsupported when the link cannot be made, and the caller
// creates an empty file instead.
func createEmpty(path string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".runtime-*.sqlite3")
	if err != nil {
		return err
	}
	name := tmp.Name()
	defer os.Remove(name)
	_, err = tmp.WriteString(emptyDatabase)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := os.Link(name, path); err != nil && !errors.Is(err, os.ErrExist) {
		// No hard links here (or no right to make one): the caller falls
		// back to an empty file, in which Open creates the schema.
		return errors.ErrUnsupported
	}
	return nil
}
