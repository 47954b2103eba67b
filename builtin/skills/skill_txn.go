package skills

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/demiurge/demiurge/builtin/internal/rootfs"
)

// skillTxn applies one skill change inside a core so that it can be undone
// exactly. A file that is replaced keeps its old inode as a hidden backup
// (a hard link, or a copy where links are not supported); a file or
// directory that is removed is first renamed to a hidden backup; whatever
// is created is recorded. rollback undoes the steps in reverse order;
// commit drops the backups. Backups live in the skills root under hidden
// names, which the core loader skips, so a crash between the steps leaves
// the core loadable and the backup recoverable by hand.
//
// A skillTxn is used by one goroutine, under the core's skill lock.
type skillTxn struct {
	root    *os.Root // the core directory
	backups string   // core-relative directory for backups (the skills root)
	undo    []func() error
	drop    []string // backups to remove on commit
}

func (tx *skillTxn) backupName() string {
	return filepath.Join(tx.backups, ".skill-manage-"+rootfs.RandomHex(12)+".bak")
}

// mkdirAll creates the missing directories of dir, recording each.
func (tx *skillTxn) mkdirAll(dir string) error {
	parts := rootfs.SplitPath(dir)
	for i := range parts {
		p := filepath.Join(parts[:i+1]...)
		info, err := tx.root.Lstat(p)
		if err == nil {
			if !info.IsDir() {
				return fmt.Errorf("%s is not a directory", filepath.ToSlash(p))
			}
			continue
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if err := tx.root.Mkdir(p, rootfs.DirMode); err != nil {
			return err
		}
		tx.undo = append(tx.undo, func() error { return tx.root.Remove(p) })
	}
	return nil
}

// writeFile replaces (or creates) the regular file rel with data, keeping
// an existing file's mode.
func (tx *skillTxn) writeFile(rel string, data []byte) error {
	mode, exists, err := rootfs.ExistingMode(tx.root, rel, rootfs.FileMode)
	if err != nil {
		return err
	}
	tmp := rootfs.TempName(rel, "tmp")
	f, err := tx.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if err := rootfs.WriteAndClose(f, data, mode); err != nil {
		_ = tx.root.Remove(tmp)
		return err
	}
	if exists {
		bak := tx.backupName()
		if err := tx.keep(rel, bak); err != nil {
			_ = tx.root.Remove(tmp)
			return err
		}
		tx.undo = append(tx.undo, func() error { return tx.root.Rename(bak, rel) })
		tx.drop = append(tx.drop, bak)
	}
	if err := tx.root.Rename(tmp, rel); err != nil {
		_ = tx.root.Remove(tmp)
		return err
	}
	if !exists {
		tx.undo = append(tx.undo, func() error { return tx.root.Remove(rel) })
	}
	rootfs.SyncDir(tx.root, filepath.Dir(rel))
	return nil
}

// keep makes bak a second name of rel's current content: a hard link, or a
// byte-for-byte copy with the same mode.
func (tx *skillTxn) keep(rel, bak string) error {
	if err := tx.root.Link(rel, bak); err == nil {
		return nil
	}
	src, err := tx.root.Open(rel)
	if err != nil {
		return err
	}
	defer src.Close()
	info, err := src.Stat()
	if err != nil {
		return err
	}
	dst, err := tx.root.OpenFile(bak, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		_ = tx.root.Remove(bak)
		return err
	}
	if err := rootfs.WriteAndClose(dst, nil, info.Mode().Perm()); err != nil {
		_ = tx.root.Remove(bak)
		return err
	}
	return nil
}

// remove takes the file or directory rel away by renaming it to a backup.
func (tx *skillTxn) remove(rel string) error {
	bak := tx.backupName()
	if err := tx.root.Rename(rel, bak); err != nil {
		return err
	}
	tx.undo = append(tx.undo, func() error { return tx.root.Rename(bak, rel) })
	tx.drop = append(tx.drop, bak)
	return nil
}

// removeEmptyDirs removes dir and its parents while they are empty,
// stopping at stop (which stays).
func (tx *skillTxn) removeEmptyDirs(dir, stop string) {
	for cur := dir; cur != stop && rootfs.IsBelow(stop, cur); cur = filepath.Dir(cur) {
		info, err := tx.root.Lstat(cur)
		if err != nil || !info.IsDir() {
			return
		}
		if tx.root.Remove(cur) != nil {
			return // not empty
		}
		p, mode := cur, info.Mode().Perm()
		tx.undo = append(tx.undo, func() error {
			if err := tx.root.Mkdir(p, mode); err != nil {
				return err
			}
			return tx.root.Chmod(p, mode)
		})
	}
}

// rollback undoes every step, newest first, and reports the steps that
// could not be undone.
func (tx *skillTxn) rollback() error {
	var errs []error
	for i := len(tx.undo) - 1; i >= 0; i-- {
		if err := tx.undo[i](); err != nil {
			errs = append(errs, err)
		}
	}
	// Every backup was renamed back by its undo step; one whose step
	// failed stays where it is, for the operator.
	tx.undo, tx.drop = nil, nil
	return errors.Join(errs...)
}

// commit drops the backups. A backup that cannot be removed stays hidden
// in the skills root; it changes nothing the core loader reads.
func (tx *skillTxn) commit() {
	for _, b := range tx.drop {
		_ = tx.root.RemoveAll(b)
	}
	tx.drop, tx.undo = nil, nil
}
