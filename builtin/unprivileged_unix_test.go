//go:build unix

package builtin_test

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// unprivilegedUID is the account root-run tests drop to ("nobody").
const unprivilegedUID = 65534

// runUnprivileged runs the test named name again, in a copy of this test
// binary executing as an unprivileged user, so that permission checks
// apply; the test fails if the child fails. It skips when the system
// cannot start such a process.
func runUnprivileged(t *testing.T, name string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "builtin-unprivileged-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "builtin.test")
	if err := copyFile(os.Args[0], bin, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^"+name+"$", "-test.count=1", "-test.v")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TMPDIR="+dir, "HOME="+dir, "GOCOVERDIR=")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: unprivilegedUID, Gid: unprivilegedUID}}
	out, err := cmd.CombinedOutput()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Skipf("cannot run as uid %d: %v", unprivilegedUID, err)
	}
	if err != nil {
		t.Fatalf("unprivileged run failed: %v\n%s", err, out)
	}
	t.Logf("unprivileged run:\n%s", out)
}

func copyFile(src, dst string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
