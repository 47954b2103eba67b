package files

import (
	"context"
	"io"
	"os"
	"strings"

	"github.com/demiurge/demiurge/builtin/internal/rootfs"
	"github.com/demiurge/demiurge/builtin/internal/tool"
	"github.com/demiurge/demiurge/builtin/internal/udiff"
	"github.com/demiurge/demiurge/builtin/internal/workspace"
	"github.com/demiurge/demiurge/effect"
)

func Patch(d Deps) effect.Definition {
	return effect.Definition{
		Name:        "patch",
		Description: "Apply an exact text replacement to a file in the workspace. Use this for targeted edits. Returns a unified diff.",
		Schema: tool.ObjectSchema(map[string]any{
			"path":  map[string]any{"type": "string", "description": "File path, relative to the workspace."},
			"old":   map[string]any{"type": "string", "description": "Exact text to replace."},
			"new":   map[string]any{"type": "string", "description": "Replacement text."},
			"count": map[string]any{"type": "integer", "default": -1, "description": "Occurrences to replace from the start; -1 replaces all."},
		}, "path", "old", "new"),
		Source:         effect.SourceBuiltin,
		Risk:           "medium",
		Capability:     "fs.write",
		ApprovalPolicy: effect.ApprovalPrompt,
		Adapter: pathTool[patchArgs]{
			deps: d, op: workspace.OpWrite, action: "fs.write",
			path: func(a patchArgs) string { return a.Path },
			run:  runPatch,
		}.adapter(patchArgs{Count: -1}),
	}
}

type patchArgs struct {
	Path  string `json:"path"`
	Old   string `json:"old"`
	New   string `json:"new"`
	Count int64  `json:"count"`
}

// runPatch replaces text in a workspace file atomically and returns the
// unified diff of the change.
func runPatch(_ context.Context, c *pathCall[patchArgs]) (effect.Outcome, error) {
	w, t := c.w, c.t
	old, repl := c.args.Old, c.args.New
	if old == "" {
		return tool.Invalid("old text is required"), nil
	}
	root, err := w.OpenRoot()
	if err != nil {
		return tool.Invalid("patch failed: %s: %s", t.Show, tool.IOReason(err)), nil
	}
	defer root.Close()
	data, mode, out, ok := readForPatch(root, t)
	if !ok {
		return out, nil
	}
	text := string(data)
	if !strings.Contains(text, old) {
		return tool.Invalid("old text not found in %s", t.Show), nil
	}
	n := int(max(c.args.Count, -1))
	patched := strings.Replace(text, old, repl, n)
	if patched != text {
		if err := c.pt.deps.writer.Write(root, t.Rel, []byte(patched), mode); err != nil {
			return tool.Invalid("patch failed: %s: %s", t.Show, tool.IOReason(err)), nil
		}
	}
	diff := udiff.Text(t.Show, text, patched)
	content := diff
	if content == "" {
		content = "patched " + t.Show
	}
	content = tool.TruncateText(content, tool.OutputChars)
	return tool.Succeeded(content, map[string]any{"path": t.Show, "diff": tool.TruncateText(diff, tool.OutputChars)}), nil
}

// readForPatch reads the regular file t whole (at most maxPatchBytes) and
// returns it with its mode.
func readForPatch(root *os.Root, t workspace.Target) ([]byte, os.FileMode, effect.Outcome, bool) {
	f, out, ok := openRegular(root, t)
	if !ok {
		return nil, 0, out, false
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, 0, tool.Invalid("patch failed: %s: %s", t.Show, tool.IOReason(err)), false
	}
	data, err := io.ReadAll(io.LimitReader(f, rootfs.MaxEditBytes+1))
	if err != nil {
		return nil, 0, tool.Invalid("patch failed: %s: %s", t.Show, tool.IOReason(err)), false
	}
	if len(data) > rootfs.MaxEditBytes {
		return nil, 0, tool.Invalid("file is too large to patch: %s (more than %d bytes)", t.Show, rootfs.MaxEditBytes), false
	}
	return data, info.Mode().Perm(), effect.Outcome{}, true
}
