package builtin

import (
	"crypto/rand"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
)

// hookBeforeRename, when set by a test, runs once the temporary file of
// writeAtomic is complete and before it replaces the target; an error
// aborts the write there.
var hookBeforeRename func() error

// writeAtomic replaces rel under root with data. The bytes go to a hidden
// temporary file in the same directory, which is given mode, synced and
// renamed over rel, so a failure at any step leaves the previous content
// (or no file) and no temporary file behind.
func writeAtomic(root *os.Root, rel string, data []byte, mode fs.FileMode) error {
	tmp := tempName(rel, "tmp")
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			_ = root.Remove(tmp)
		}
	}()
	if err := writeAndClose(f, data, mode); err != nil {
		return err
	}
	if hook := hookBeforeRename; hook != nil {
		if err := hook(); err != nil {
			return err
		}
	}
	if err := root.Rename(tmp, rel); err != nil {
		return err
	}
	done = true
	syncDir(root, filepath.Dir(rel))
	return nil
}

// writeAndClose writes data to f, sets its mode (umask does not apply),
// syncs and closes it.
func writeAndClose(f *os.File, data []byte, mode fs.FileMode) error {
	_, err := f.Write(data)
	if err == nil {
		err = f.Chmod(mode)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// tempName returns a fresh hidden sibling name of rel,
// ".<name>.<24 hex>.<suffix>".
func tempName(rel, suffix string) string {
	base := firstChars(filepath.Base(rel), 64)
	return filepath.Join(filepath.Dir(rel), "."+base+"."+randomHex(12)+"."+suffix)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return hex.EncodeToString(b)
}

// syncDir makes a rename in dir durable where the platform allows it; a
// failure only weakens durability, never the content, so it is ignored.
func syncDir(root *os.Root, dir string) {
	d, err := root.Open(dir)
	if err != nil {
		return
	}
	_ = d.Sync()
	_ = d.Close()
}

// existingMode returns the permission bits of the regular file rel under
// root, or def when it does not exist. exists reports which.
func existingMode(root *os.Root, rel string, def fs.FileMode) (mode fs.FileMode, exists bool, err error) {
	info, err := root.Lstat(rel)
	if err != nil {
		if os.IsNotExist(err) {
			return def, false, nil
		}
		return 0, false, err
	}
	return info.Mode().Perm(), true, nil
}
