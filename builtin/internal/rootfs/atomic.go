package rootfs

import (
	"crypto/rand"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/demiurge/demiurge/builtin/internal/tool"
)

// WriteAtomic replaces rel under root with data. The bytes go to a hidden
// temporary file in the same directory, which is given mode, synced and
// renamed over rel, so a failure at any step leaves the previous content
// (or no file) and no temporary file behind.
func WriteAtomic(root *os.Root, rel string, data []byte, mode fs.FileMode) error {
	return Writer{}.Write(root, rel, data, mode)
}

// Writer writes like WriteAtomic. BeforeRename, when set, runs once the
// temporary file is complete and before it replaces the target; an error
// aborts the write there (tests inject a failure with it).
type Writer struct {
	BeforeRename func() error
}

// Write replaces rel under root with data, atomically.
func (w Writer) Write(root *os.Root, rel string, data []byte, mode fs.FileMode) error {
	tmp := TempName(rel, "tmp")
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
	if err := WriteAndClose(f, data, mode); err != nil {
		return err
	}
	if w.BeforeRename != nil {
		if err := w.BeforeRename(); err != nil {
			return err
		}
	}
	if err := root.Rename(tmp, rel); err != nil {
		return err
	}
	done = true
	SyncDir(root, filepath.Dir(rel))
	return nil
}

// WriteAndClose writes data to f, sets its mode (umask does not apply),
// syncs and closes it.
func WriteAndClose(f *os.File, data []byte, mode fs.FileMode) error {
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

// TempName returns a fresh hidden sibling name of rel,
// ".<name>.<24 hex>.<suffix>".
func TempName(rel, suffix string) string {
	base := tool.FirstChars(filepath.Base(rel), 64)
	return filepath.Join(filepath.Dir(rel), "."+base+"."+RandomHex(12)+"."+suffix)
}

func RandomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return hex.EncodeToString(b)
}

// SyncDir makes a rename in dir durable where the platform allows it; a
// failure only weakens durability, never the content, so it is ignored.
func SyncDir(root *os.Root, dir string) {
	d, err := root.Open(dir)
	if err != nil {
		return
	}
	_ = d.Sync()
	_ = d.Close()
}

// ExistingMode returns the permission bits of the regular file rel under
// root, or def when it does not exist. exists reports which.
func ExistingMode(root *os.Root, rel string, def fs.FileMode) (mode fs.FileMode, exists bool, err error) {
	info, err := root.Lstat(rel)
	if err != nil {
		if os.IsNotExist(err) {
			return def, false, nil
		}
		return 0, false, err
	}
	return info.Mode().Perm(), true, nil
}
