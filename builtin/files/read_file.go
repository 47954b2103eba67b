package files

import (
	"bytes"
	"context"
	"fmt"
	"os"

	"github.com/demiurge/demiurge/builtin/internal/textread"
	"github.com/demiurge/demiurge/builtin/internal/tool"
	"github.com/demiurge/demiurge/builtin/internal/workspace"
	"github.com/demiurge/demiurge/effect"
)

const (
	// countAheadBytes bounds how far past its window read_file reads to
	// count the characters it leaves out. Beyond it the rest is reported
	// in bytes, so a window of a huge file costs the window, not the file.
	countAheadBytes = 1 << 20
)

func ReadFile(d Deps) effect.Definition {
	return effect.Definition{
		Name:        "read_file",
		Description: "Read a text file. Use offset and limit (characters) to page through large files.",
		Schema: tool.ObjectSchema(map[string]any{
			"path":   map[string]any{"type": "string", "description": "File path, relative to the workspace; ~ is the user's home."},
			"offset": map[string]any{"type": "integer", "minimum": 0, "default": 0, "description": "First character to return."},
			"limit":  map[string]any{"type": "integer", "minimum": 1, "maximum": tool.ReadLimitChars, "default": tool.ReadLimitChars, "description": "Characters to return."},
		}, "path"),
		Source:         effect.SourceBuiltin,
		Risk:           "low",
		Capability:     "fs.read",
		ApprovalPolicy: effect.ApprovalAuto,
		Adapter: pathTool[readArgs]{
			deps: d, op: workspace.OpRead, action: "read", summary: "Read file %s",
			path: func(a readArgs) string { return a.Path },
			run:  runReadFile,
		}.adapter(readArgs{}),
	}
}

type readArgs struct {
	Path   string `json:"path"`
	Offset int64  `json:"offset"`
	Limit  int64  `json:"limit"`
}

// runReadFile returns the window [offset, offset+limit) of a file's
// characters. It reads the file only up to the end of the window (plus at
// most countAheadBytes to count what it leaves out), never the whole file.
// A file outside the workspace is read through an os.Root at its own
// directory; the dispatcher has had the read approved by then.
func runReadFile(ctx context.Context, c *pathCall[readArgs]) (effect.Outcome, error) {
	w, t := c.w, c.t
	offset := max(c.args.Offset, 0)
	limit := tool.Positive(c.args.Limit, tool.ReadLimitChars, tool.ReadLimitChars)

	dir, name := t.DirAndName(w)
	root, err := os.OpenRoot(dir)
	if err != nil {
		return tool.Invalid("read failed: %s: %s", t.Show, tool.IOReason(err)), nil
	}
	defer root.Close()
	f, out, ok := openNamed(root, name, t.Show)
	if !ok {
		return out, nil
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return tool.Invalid("read failed: %s: %s", t.Show, tool.IOReason(err)), nil
	}

	rr, release := textread.Pooled(f)
	defer release()
	skipped, err := rr.Skip(ctx, offset)
	if err != nil {
		return readFailed(ctx, t, err)
	}
	var text bytes.Buffer
	text.Grow(int(min(limit, info.Size()+1)))
	taken, err := rr.Take(limit, &text)
	if err != nil {
		return readFailed(ctx, t, err)
	}
	end := skipped + taken
	data := map[string]any{"path": t.Show, "offset": offset, "end": end, "total_bytes": info.Size(), "truncated": false}

	if !rr.Fill() {
		if rr.Err() != nil {
			return readFailed(ctx, t, rr.Err())
		}
		data["total_chars"] = end
		return tool.Succeeded(text.String(), data), nil
	}
	data["truncated"] = true
	left := info.Size() - rr.Consumed()
	if left <= countAheadBytes {
		n, complete, err := rr.Count(ctx, countAheadBytes)
		if err != nil {
			return readFailed(ctx, t, err)
		}
		if complete {
			data["total_chars"] = end + n
			fmt.Fprintf(&text, "\n...[truncated %d chars]", n)
			return tool.Succeeded(text.String(), data), nil
		}
		left = max(info.Size()-rr.Consumed(), 1) // the file grew while being read
	}
	fmt.Fprintf(&text, "\n...[truncated: %d more bytes not read; continue with offset=%d]", max(left, 1), end)
	return tool.Succeeded(text.String(), data), nil
}

// openRegular opens the regular file t under the workspace's root.
func openRegular(root *os.Root, t workspace.Target) (*os.File, effect.Outcome, bool) {
	return openNamed(root, t.Rel, t.Show)
}

// openNamed opens the regular file name under root; show names it in
// messages. A missing path, one that is not a regular file, or one
// replaced between the check and the open is an outcome the model sees.
func openNamed(root *os.Root, name, show string) (*os.File, effect.Outcome, bool) {
	before, err := root.Lstat(name)
	if os.IsNotExist(err) {
		return nil, tool.Invalid("path does not exist: %s", show), false
	}
	if err != nil {
		return nil, tool.Invalid("read failed: %s: %s", show, tool.IOReason(err)), false
	}
	if !before.Mode().IsRegular() {
		return nil, tool.Invalid("path is not a file: %s", show), false
	}
	f, err := root.Open(name)
	if err != nil {
		return nil, tool.Invalid("read failed: %s: %s", show, tool.IOReason(err)), false
	}
	after, err := f.Stat()
	if err != nil || !os.SameFile(before, after) {
		f.Close()
		return nil, tool.Invalid("read failed: %s: the file changed while it was opened", show), false
	}
	return f, effect.Outcome{}, true
}

// readFailed reports a read error after the file was opened; a cancelled
// call is the caller's error, not the file's.
func readFailed(ctx context.Context, t workspace.Target, err error) (effect.Outcome, error) {
	if ctx.Err() != nil {
		return effect.Outcome{}, ctx.Err()
	}
	out := tool.Invalid("read failed: %s: %s", t.Show, tool.IOReason(err))
	out.ExecutionStarted = true
	return out, nil
}
