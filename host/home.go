package host

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/core"
	"github.com/demiurge/demiurge/store"
)

// Home is the layout of a runtime home.
type Home struct{ Dir string }

func (h Home) ConfigPath() string       { return filepath.Join(h.Dir, "config.yaml") }
func (h Home) AgentsDir() string        { return filepath.Join(h.Dir, "agents") }
func (h Home) CoreDir(id string) string { return filepath.Join(h.Dir, "agents", id) }
func (h Home) RuntimeDir() string       { return filepath.Join(h.Dir, "runtime") }
func (h Home) DBPath() string           { return filepath.Join(h.Dir, "runtime", "runtime.sqlite3") }
func (h Home) ArtifactsDir() string     { return filepath.Join(h.Dir, "runtime", "artifacts") }
func (h Home) LogsDir() string          { return filepath.Join(h.Dir, "logs") }
func (h Home) WorkspaceDir() string     { return filepath.Join(h.Dir, "workspace") }

// PrivateDir holds the private HOMEs of terminal commands and MCP servers.
// It lies beside the runtime home, not inside it: the sandbox hides the
// runtime home from every command, and hides this directory too except
// for the one private home a command gets.
func (h Home) PrivateDir() string { return filepath.Clean(h.Dir) + ".private" }

// InitReport says what Init created.
type InitReport struct {
	Home          string   `json:"home"`
	ConfigCreated bool     `json:"host_config_created"`
	CoresCreated  []string `json:"cores_created"`
	Refreshed     []string `json:"refreshed"`
}

// Init creates whatever is missing of the home: directories (0700),
// config.yaml and the embedded default cores (0600). It never overwrites an
// existing file unless refresh names a core ("assistant", "evolver",
// "global" or "all"). It is idempotent, and serialised across processes
// by runtime/init.lock.
func Init(dir, refresh string) (InitReport, error) {
	h := Home{Dir: dir}
	rep := InitReport{Home: dir}
	for _, d := range []string{h.Dir, h.AgentsDir(), h.RuntimeDir(), h.ArtifactsDir(), h.LogsDir(), h.WorkspaceDir()} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return rep, demiurge.WrapError(demiurge.ECONFIG, err, "create %s: %s", d, demiurge.IOReason(err))
		}
		if err := os.Chmod(d, 0o700); err != nil {
			return rep, demiurge.WrapError(demiurge.ECONFIG, err, "chmod %s: %s", d, demiurge.IOReason(err))
		}
	}
	// Concurrent first runs install the home one at a time.
	lock, err := lockInit(h)
	if err != nil {
		return rep, err
	}
	defer lock.Close()
	if _, err := os.Stat(h.ConfigPath()); errors.Is(err, fs.ErrNotExist) {
		if err := writeFileAtomic(h.ConfigPath(), []byte(defaultConfigYAML)); err != nil {
			return rep, err
		}
		rep.ConfigCreated = true
	}
	for _, id := range []string{"assistant", "evolver"} {
		if _, err := os.Stat(filepath.Join(h.CoreDir(id), "agent.yaml")); errors.Is(err, fs.ErrNotExist) {
			if err := core.InstallTemplates(h.AgentsDir(), id, false); err != nil {
				return rep, err
			}
			rep.CoresCreated = append(rep.CoresCreated, id)
		}
	}
	if _, err := os.Stat(filepath.Join(h.AgentsDir(), "agent.yaml")); errors.Is(err, fs.ErrNotExist) {
		if err := core.InstallTemplates(h.AgentsDir(), "global", false); err != nil {
			return rep, err
		}
	}
	if refresh != "" {
		switch refresh {
		case "assistant", "evolver", "global", "all":
		default:
			return rep, demiurge.Errorf(demiurge.EINVALID, "--refresh must be assistant, evolver, global or all, got %q", refresh)
		}
		if err := core.InstallTemplates(h.AgentsDir(), refresh, true); err != nil {
			return rep, err
		}
		rep.Refreshed = append(rep.Refreshed, refresh)
	}
	return rep, nil
}

// InitHome resolves a runtime home to an absolute path and creates what is
// missing of it (Init without a refresh), for the commands that work on a
// home without opening the whole Host.
func InitHome(home string) (Home, error) {
	dir, err := filepath.Abs(home)
	if err != nil {
		return Home{}, demiurge.WrapError(demiurge.ECONFIG, err, "runtime home %q is not usable", home)
	}
	if _, err := Init(dir, ""); err != nil {
		return Home{}, err
	}
	return Home{Dir: dir}, nil
}

// InitDatabase creates (or migrates) the runtime database of home, where
// Database puts it (getenv reads DEMIURGE_DATABASE_URL; nil reads none):
// store.Open creates an SQLite file 0600 in WAL mode with the current
// schema, or the schema of an empty PostgreSQL ledger, and refuses a
// database that is not ours. created reports whether the SQLite file was
// missing (false on PostgreSQL).
func InitDatabase(ctx context.Context, home Home, getenv func(string) string) (created bool, err error) {
	cfg, err := LoadConfig(home.ConfigPath())
	if err != nil {
		return false, err
	}
	where, err := Database(home, cfg, getenv)
	if err != nil {
		return false, err
	}
	_, statErr := os.Stat(where)
	db, err := store.Open(ctx, where, store.Options{})
	if err != nil {
		return false, err
	}
	if err := db.Close(); err != nil {
		return false, err
	}
	return !store.IsDatabaseURL(where) && errors.Is(statErr, fs.ErrNotExist), nil
}

// writeFileAtomic writes data to path (0600) through a temporary file and a
// rename, so a failed write leaves the previous content intact. It does not
// sync: it creates config.yaml of a fresh home, which, like the templates
// beside it (core.InstallTemplates), init writes again if a power failure
// cut it short.
func writeFileAtomic(path string, data []byte) error {
	if err := writeTemp(path, data); err != nil {
		return demiurge.WrapError(demiurge.ECONFIG, err, "write %s: %s", path, demiurge.IOReason(err))
	}
	return nil
}

func writeTemp(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	if err := tmp.Chmod(0o600); err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
