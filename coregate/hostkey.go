package coregate

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"

	"github.com/demiurge/demiurge"
)

// HostKeySize is the length of the Host secret key in bytes.
const HostKeySize = 32

// HostKey is the Host's secret key: the HMAC key of operator confirmation
// tokens. It lives only in the Host process and in <home>/runtime/host.key
// (Paths.HostKey, mode 0600). It formats, logs and marshals as
// "[host key]", never as its bytes, so it cannot leak through a log line,
// an event or an error by accident.
type HostKey struct{ b [HostKeySize]byte }

// NewHostKey returns a key of the given bytes (tests and callers that keep
// the key elsewhere). EINVALID unless len(b) is HostKeySize.
func NewHostKey(b []byte) (*HostKey, error) {
	if len(b) != HostKeySize {
		return nil, demiurge.Errorf(demiurge.EINVALID, "host key must be %d bytes, got %d", HostKeySize, len(b))
	}
	k := &HostKey{}
	copy(k.b[:], b)
	return k, nil
}

const hostKeyRedacted = "[host key]"

// String, GoString, Format, LogValue and MarshalText never show the key.
func (k *HostKey) String() string               { return hostKeyRedacted }
func (k *HostKey) GoString() string             { return hostKeyRedacted }
func (k *HostKey) Format(f fmt.State, _ rune)   { _, _ = io.WriteString(f, hostKeyRedacted) }
func (k *HostKey) LogValue() slog.Value         { return slog.StringValue(hostKeyRedacted) }
func (k *HostKey) MarshalText() ([]byte, error) { return []byte(hostKeyRedacted), nil }

func (k *HostKey) isZero() bool { return k == nil || k.b == [HostKeySize]byte{} }

// hostKeyError is ECONFIG "host key file <path> <detail>".
func hostKeyError(path, detail string) error {
	return demiurge.Errorf(demiurge.ECONFIG, "host key file %s %s", path, detail)
}

// hostKeyCorrupt refuses a key file whose content is not a key. The file
// is left alone: replacing it would silently invalidate every outstanding
// token, so the operator decides.
func hostKeyCorrupt(path, why string) error {
	return hostKeyError(path, why+"; remove it to make a new key (confirmation tokens issued with the old key stop working)")
}

func hostKeyIOError(op, path string, err error) error {
	return demiurge.WrapError(demiurge.EINTERNAL, err, "core repository: %s host key file %s", op, path)
}

// LoadHostKey reads the Host secret key from path, creating it on first
// use: 32 random bytes written to a private temporary file and published
// with a hard link (which, like O_EXCL, never replaces an existing file),
// so concurrent first uses agree on one key and no reader sees a partial
// file. An existing file is never rewritten: one that is not a regular
// file, is not exactly 32 bytes, or (outside Windows) is accessible by
// group or others is ECONFIG naming the file and what to do. Errors never
// contain key bytes.
func LoadHostKey(path string) (*HostKey, error) {
	k, err := readHostKey(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return k, err
	}
	if err := createHostKey(path); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, err
	}
	return readHostKey(path)
}

// readHostKey reads an existing key file; fs.ErrNotExist when there is
// none.
func readHostKey(path string) (*HostKey, error) {
	info, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fs.ErrNotExist
	}
	if err != nil {
		return nil, hostKeyIOError("stat", path, err)
	}
	if !info.Mode().IsRegular() {
		return nil, hostKeyError(path, "is not a regular file ("+info.Mode().Type().String()+")")
	}
	if perm := info.Mode().Perm(); runtime.GOOS != "windows" && perm&0o077 != 0 {
		return nil, hostKeyError(path, fmt.Sprintf("is accessible by other users (mode %04o); run `chmod 600 %s`", perm, path))
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, hostKeyIOError("open", path, err)
	}
	defer f.Close()
	var buf [HostKeySize + 1]byte
	n, err := io.ReadFull(f, buf[:])
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, hostKeyIOError("read", path, err)
	}
	if n != HostKeySize {
		why := fmt.Sprintf("is corrupt: %d bytes, want %d", n, HostKeySize)
		if n > HostKeySize {
			why = fmt.Sprintf("is corrupt: longer than %d bytes", HostKeySize)
		}
		return nil, hostKeyCorrupt(path, why)
	}
	k := &HostKey{}
	copy(k.b[:], buf[:HostKeySize])
	if k.isZero() {
		return nil, hostKeyCorrupt(path, "is corrupt: all zero bytes")
	}
	return k, nil
}

// createHostKey writes a new key at path unless a file is there
// (fs.ErrExist then).
func createHostKey(path string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return hostKeyIOError("create directory for", path, err)
	}
	var b [HostKeySize]byte
	if _, err := rand.Read(b[:]); err != nil {
		return demiurge.WrapError(demiurge.EINTERNAL, err, "generate host key")
	}
	defer clear(b[:])
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*") // O_EXCL, mode 0600
	if err != nil {
		return hostKeyIOError("create temporary", path, err)
	}
	name := tmp.Name()
	defer os.Remove(name)
	if err := writeKeyFile(tmp, b[:]); err != nil {
		return hostKeyIOError("write", name, err)
	}
	err = os.Link(name, path)
	if err == nil || errors.Is(err, fs.ErrExist) {
		return err
	}
	// A file system without hard links: create the file itself with
	// O_EXCL. A reader racing this first write can see a short file (and
	// says so); no existing key is ever replaced.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return err
	}
	if err != nil {
		return hostKeyIOError("create", path, err)
	}
	if err := writeKeyFile(f, b[:]); err != nil {
		return hostKeyIOError("write", path, err)
	}
	return nil
}

// writeKeyFile writes, syncs and closes f: a key that outstanding tokens
// depend on should survive a power loss.
func writeKeyFile(f *os.File, b []byte) error {
	if err := f.Chmod(0o600); err != nil && runtime.GOOS != "windows" {
		f.Close()
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
