package builtin

import (
	"context"
	"io"
	"os"
	"strings"

	"github.com/demiurge/demiurge/effect"
)

// maxPatchBytes bounds the files patch (and skill_manage patch) rewrite:
// the whole file is held in memory to replace text in it.
const maxPatchBytes = 16 << 20

func patch(d Deps) effect.Definition {
	return effect.Definition{
		Name:        "patch",
		Description: "Apply an exact text replacement to a file in the workspace. Use this for targeted edits. Returns a unified diff.",
		Schema: objectSchema(map[string]any{
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
			deps: d, op: opWrite, action: "fs.write",
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
		return invalid("old text is required"), nil
	}
	root, err := w.openRoot()
	if err != nil {
		return invalid("patch failed: %s: %s", t.show, ioReason(err)), nil
	}
	defer root.Close()
	data, mode, out, ok := readForPatch(root, t)
	if !ok {
		return out, nil
	}
	text := string(data)
	if !strings.Contains(text, old) {
		return invalid("old text not found in %s", t.show), nil
	}
	n := int(max(c.args.Count, -1))
	patched := strings.Replace(text, old, repl, n)
	if patched != text {
		if err := writeAtomic(root, t.rel, []byte(patched), mode); err != nil {
			return invalid("patch failed: %s: %s", t.show, ioReason(err)), nil
		}
	}
	diff := textDiff(t.show, text, patched)
	content := diff
	if content == "" {
		content = "patched " + t.show
	}
	content = truncateText(content, defaultToolOutputChars)
	return succeeded(content, map[string]any{"path": t.show, "diff": truncateText(diff, defaultToolOutputChars)}), nil
}

// readForPatch reads the regular file t whole (at most maxPatchBytes) and
// returns it with its mode.
func readForPatch(root *os.Root, t target) ([]byte, os.FileMode, effect.Outcome, bool) {
	f, out, ok := openRegular(root, t)
	if !ok {
		return nil, 0, out, false
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, 0, invalid("patch failed: %s: %s", t.show, ioReason(err)), false
	}
	data, err := io.ReadAll(io.LimitReader(f, maxPatchBytes+1))
	if err != nil {
		return nil, 0, invalid("patch failed: %s: %s", t.show, ioReason(err)), false
	}
	if len(data) > maxPatchBytes {
		return nil, 0, invalid("file is too large to patch: %s (more than %d bytes)", t.show, maxPatchBytes), false
	}
	return data, info.Mode().Perm(), effect.Outcome{}, true
}

// textDiff is the unified diff of two versions of the file show, invalid
// UTF-8 shown as U+FFFD.
func textDiff(show, before, after string) string {
	return unifiedDiff("a/"+show, "b/"+show,
		splitLines(strings.ToValidUTF8(before, "\uFFFD")),
		splitLines(strings.ToValidUTF8(after, "\uFFFD")))
}
