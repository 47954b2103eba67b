package host

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/demiurge/demiurge"
)

// uploadOpener is how a channel opens a local file a delivery names
// (send_image, send_file) before it uploads it: the file must lie in the
// core's workspace or the delivery's session artifact directory — the rule
// the slot runtime applied when the turn named it (demiurge.ContainedPath),
// checked again because the file may have changed since — and is opened
// through an os.Root of that directory, so a symbolic link swapped in
// meanwhile cannot lead outside it. Only a regular file is opened: the
// open does not block (a FIFO the turn made there would hang the delivery
// forever), and anything else is refused. Errors: EUNAUTHORIZED for a
// path outside both, EINVALID for one that cannot be opened or is not a
// regular file.
func uploadOpener(workspace, artifacts string) func(sessionID, path string) (*os.File, error) {
	return func(sessionID, p string) (*os.File, error) {
		sessionRoot := ""
		if sessionID != "" && artifacts != "" && !strings.ContainsAny(sessionID, `/\`) && sessionID != "." && sessionID != ".." {
			sessionRoot = filepath.Join(artifacts, sessionID)
		}
		abs, ok := demiurge.ContainedPath(p, workspace, sessionRoot)
		if !ok {
			return nil, demiurge.Errorf(demiurge.EUNAUTHORIZED, "attachment path is outside the workspace or session: %s", p)
		}
		for _, root := range []string{workspace, sessionRoot} {
			if root == "" {
				continue
			}
			rel, err := filepath.Rel(root, abs)
			if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				continue
			}
			r, err := os.OpenRoot(root)
			if err != nil {
				return nil, demiurge.WrapError(demiurge.EINVALID, err, "open %s: %s", p, demiurge.IOReason(err))
			}
			f, err := r.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
			r.Close()
			if err != nil {
				return nil, demiurge.WrapError(demiurge.EINVALID, err, "open %s: %s", p, demiurge.IOReason(err))
			}
			if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
				f.Close()
				return nil, demiurge.Errorf(demiurge.EINVALID, "%s is not a regular file", p)
			}
			return f, nil
		}
		return nil, demiurge.Errorf(demiurge.EUNAUTHORIZED, "attachment path is outside the workspace or session: %s", p)
	}
}
