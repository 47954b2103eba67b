package core

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	gosync "sync"

	"github.com/demiurge/demiurge"
)

//go:embed all:templates
var templates embed.FS

// TemplateFS returns the embedded default templates, rooted so that paths
// read "agents/agent.yaml", "agents/assistant/…", "agents/evolver/…".
func TemplateFS() fs.FS {
	sub, err := fs.Sub(templates, "templates")
	if err != nil {
		panic(err) // the directory is embedded at build time
	}
	return sub
}

// Template sets InstallTemplates accepts.
const (
	TemplateAssistant = "assistant"
	TemplateEvolver   = "evolver"
	TemplateGlobal    = "global"
	TemplateAll       = "all"
)

// InstallTemplates writes embedded templates into agentsDir (the runtime
// home's agents directory): which is "assistant" or "evolver" (the core
// directory of that name), "global" (agentsDir/agent.yaml) or "all".
//
// Directories are created 0700 and files written 0600, each file atomically
// (a temporary file in the same directory, then a rename). Existing files
// are left untouched unless overwrite is set; files the template does not
// contain are never removed. An unknown which is EINVALID; I/O failures are
// EINTERNAL and may leave some files written (each one whole).
func InstallTemplates(agentsDir, which string, overwrite bool) error {
	var roots []string
	switch which {
	case TemplateAssistant, TemplateEvolver:
		roots = []string{"agents/" + which}
	case TemplateGlobal:
		roots = []string{"agents/agent.yaml"}
	case TemplateAll:
		roots = []string{"agents/agent.yaml", "agents/" + TemplateAssistant, "agents/" + TemplateEvolver}
	default:
		return demiurge.Errorf(demiurge.EINVALID, "unknown template %q (expected one of: assistant, evolver, global, all)", which)
	}
	tfs := TemplateFS()
	if err := os.MkdirAll(agentsDir, 0o700); err != nil {
		return demiurge.WrapError(demiurge.EINTERNAL, err, "create %s: %s", agentsDir, demiurge.IOReason(err))
	}
	var staged stagedFiles
	defer staged.discard()
	for _, root := range roots {
		err := fs.WalkDir(tfs, root, func(name string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := strings.CutPrefix(name, "agents/")
			dest := filepath.Join(agentsDir, filepath.FromSlash(rel))
			if d.IsDir() {
				return os.MkdirAll(dest, 0o700)
			}
			data, err := fs.ReadFile(tfs, name)
			if err != nil {
				return err
			}
			return staged.stage(dest, data, overwrite)
		})
		if err != nil {
			return demiurge.WrapError(demiurge.EINTERNAL, err, "install %s template into %s: %s", which, agentsDir, demiurge.IOReason(err))
		}
	}
	if err := staged.commit(overwrite); err != nil {
		return demiurge.WrapError(demiurge.EINTERNAL, err, "install %s template into %s: %s", which, agentsDir, demiurge.IOReason(err))
	}
	return nil
}

// stagedFiles are template files written to temporary files beside their
// destinations, each renamed into place once all of them are written, so a
// crash never leaves a file half-written. Files that replace others (a
// refresh) are synced to disk first, together rather than one after the
// other: a sync is milliseconds, and a core has a few dozen files. Files
// of a fresh install are not: nothing is lost if a power failure cuts
// them short, `demiurge init --refresh` writes them again, and syncing
// them would cost a first run more than the rest of it.
type stagedFiles []stagedFile

type stagedFile struct {
	tmp  *os.File
	dest string
}

// stage writes data to a temporary file for dest (mode 0600), unless dest
// exists and overwrite is false.
func (s *stagedFiles) stage(dest string, data []byte, overwrite bool) error {
	if _, err := os.Lstat(dest); err == nil && !overwrite {
		return nil
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(dest), "."+filepath.Base(dest)+".tmp-*")
	if err != nil {
		return err
	}
	*s = append(*s, stagedFile{tmp: tmp, dest: dest})
	if err := tmp.Chmod(0o600); err != nil {
		return err
	}
	_, err = tmp.Write(data)
	return err
}

// commit syncs every staged file when sync is set (concurrently), then
// renames each into place, in the order staged.
func (s *stagedFiles) commit(sync bool) error {
	errs := make([]error, len(*s))
	if sync {
		var wg gosync.WaitGroup
		for i, f := range *s {
			wg.Go(func() { errs[i] = f.tmp.Sync() })
		}
		wg.Wait()
	}
	for i, f := range *s {
		errs[i] = errors.Join(errs[i], f.tmp.Close())
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for len(*s) > 0 {
		f := (*s)[0]
		if err := os.Rename(f.tmp.Name(), f.dest); err != nil {
			return fmt.Errorf("rename into place: %w", err)
		}
		*s = (*s)[1:]
	}
	return nil
}

// discard removes the temporary files not renamed into place.
func (s *stagedFiles) discard() {
	for _, f := range *s {
		f.tmp.Close()
		os.Remove(f.tmp.Name())
	}
	*s = nil
}
