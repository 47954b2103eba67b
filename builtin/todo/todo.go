package todo

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/demiurge/demiurge/builtin/internal/rootfs"
	"github.com/demiurge/demiurge/builtin/internal/tool"
	"github.com/demiurge/demiurge/effect"
)

const (
	maxTodoItems = 500
	maxTodoBytes = 1 << 20

	// Private runtime state (spec tool-runtime §10.3): only the Host's user
	// may read it, whatever the umask.
	privateDirMode  fs.FileMode = 0o700
	privateFileMode fs.FileMode = 0o600
)

// todoLocks serialises the read-modify-write of one session's list.
var todoLocks tool.Stripes

var todoActions = []string{"add", "list", "complete", "clear"}

type todoItem struct {
	Text string `json:"text"`
	Done bool   `json:"done"`
}

func Todo(d Deps) effect.Definition {
	return effect.Definition{
		Name:        "todo",
		Description: "Maintain a small per-session todo list for multi-step work. Add, list, complete, or clear items.",
		Schema: tool.ObjectSchema(map[string]any{
			"action": map[string]any{"type": "string", "enum": todoActions, "default": "list"},
			"text":   map[string]any{"type": "string", "description": "Item text, for add."},
			"index":  map[string]any{"type": "integer", "description": "1-based item number, for complete."},
		}),
		Source:         effect.SourceBuiltin,
		Risk:           "low",
		ApprovalPolicy: effect.ApprovalAuto,
		Adapter: tool.Simple(todoArgs{}, todoArgsError, func(ctx context.Context, inv effect.Invocation, a todoArgs) (effect.Outcome, error) {
			return runTodo(ctx, inv, d, a)
		}),
	}
}

type todoArgs struct {
	Action string `json:"action"`
	Text   string `json:"text"`
	Index  int64  `json:"index"`
}

// action is the action argument, trimmed and lowercased; "" is list.
func (a todoArgs) action() string { return strings.ToLower(strings.TrimSpace(a.Action)) }

// todoArgsError is todo's check of its action (spec tool-runtime §1.3).
func todoArgsError(a todoArgs) string {
	if action := a.action(); action != "" && !slices.Contains(todoActions, action) {
		return fmt.Sprintf("unsupported todo action: %s", action)
	}
	return ""
}

// todoDir is the session's state directory under the runtime home. The
// session id is hashed so that no id, whatever it holds, can name a path.
func todoDir(sessionID string) string {
	sum := sha256.Sum256([]byte(sessionID))
	return filepath.Join("runtime", "session-state", hex.EncodeToString(sum[:]))
}

func runTodo(_ context.Context, inv effect.Invocation, d Deps, a todoArgs) (effect.Outcome, error) {
	action := cmp.Or(a.action(), "list")
	if !slices.Contains(todoActions, action) {
		return tool.Invalid("unsupported todo action: %s", action), nil
	}
	if d.Home == "" {
		return tool.Unavailable("todo", "no runtime home is configured"), nil
	}
	if inv.Turn.SessionID == "" {
		return tool.Unavailable("todo", "the turn has no session"), nil
	}
	dir := todoDir(inv.Turn.SessionID)
	file := filepath.Join(dir, "todo.json")
	unlock := todoLocks.Lock(dir)
	defer unlock()
	root, err := os.OpenRoot(d.Home)
	if err != nil {
		return tool.Invalid("todo state unavailable: %s", tool.IOReason(err)), nil
	}
	defer root.Close()

	var todos []todoItem
	if action != "clear" {
		if todos, err = loadTodos(root, file); err != nil {
			return tool.Invalid("todo state unreadable: %v", err), nil
		}
	}
	save := func() error {
		if err := privateDirs(root, dir); err != nil {
			return err
		}
		raw, err := json.Marshal(todos)
		if err != nil {
			return err
		}
		return rootfs.WriteAtomic(root, file, raw, privateFileMode)
	}
	data := func() map[string]any { return map[string]any{"todos": todoList(todos)} }

	switch action {
	case "add":
		text := strings.TrimSpace(a.Text)
		if text == "" {
			return tool.Invalid("text is required for todo add"), nil
		}
		if len(todos) >= maxTodoItems {
			return tool.InvalidData(data(), "todo list is full: %d items; complete or clear items first", maxTodoItems), nil
		}
		todos = append(todos, todoItem{Text: text})
		if err := save(); err != nil {
			return tool.Invalid("todo state not saved: %v", tool.IOReason(err)), nil
		}
		return tool.Succeeded("todo added: "+text, data()), nil
	case "complete":
		index := a.Index
		if index < 1 || index > int64(len(todos)) {
			return tool.InvalidData(data(), "todo index out of range: %d", index), nil
		}
		todos[index-1].Done = true
		if err := save(); err != nil {
			return tool.Invalid("todo state not saved: %v", tool.IOReason(err)), nil
		}
		return tool.Succeeded(fmt.Sprintf("todo completed: %d", index), data()), nil
	case "clear":
		todos = nil
		if err := save(); err != nil {
			return tool.Invalid("todo state not saved: %v", tool.IOReason(err)), nil
		}
		return tool.Succeeded("todo list cleared", data()), nil
	}
	var lines []string
	for i, t := range todos {
		mark := " "
		if t.Done {
			mark = "x"
		}
		lines = append(lines, fmt.Sprintf("%d. [%s] %s", i+1, mark, t.Text))
	}
	if len(lines) == 0 {
		return tool.Succeeded("(no todos)", data()), nil
	}
	return tool.Succeeded(strings.Join(lines, "\n"), data()), nil
}

func todoList(todos []todoItem) []map[string]any {
	out := make([]map[string]any, 0, len(todos))
	for _, t := range todos {
		out = append(out, map[string]any{"text": t.Text, "done": t.Done})
	}
	return out
}

// loadTodos reads the list; a missing file is an empty list. Entries that
// are not {text, done} objects are dropped.
func loadTodos(root *os.Root, file string) ([]todoItem, error) {
	if link := rootfs.LinkOnPath(root, file); link != "" {
		return nil, fmt.Errorf("symbolic links are not accepted in runtime state: %s", link)
	}
	f, err := root.Open(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, errors.New(tool.IOReason(err))
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, maxTodoBytes+1))
	if err != nil {
		return nil, errors.New(tool.IOReason(err))
	}
	if len(raw) > maxTodoBytes {
		return nil, fmt.Errorf("todo.json is larger than %d bytes", maxTodoBytes)
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, errors.New("todo.json is not a JSON list; use action clear to start over")
	}
	var todos []todoItem
	for _, it := range items {
		var t todoItem
		if json.Unmarshal(it, &t) == nil && strings.TrimSpace(t.Text) != "" {
			todos = append(todos, t)
		}
	}
	return todos, nil
}

// privateDirs creates the missing directories of dir under root with mode
// privateDirMode. An existing component must be a real directory: a
// symbolic link anywhere on the way is refused, so the state cannot be
// redirected.
func privateDirs(root *os.Root, dir string) error {
	parts := rootfs.SplitPath(dir)
	for i := range parts {
		p := filepath.Join(parts[:i+1]...)
		info, err := root.Lstat(p)
		switch {
		case err == nil && info.Mode()&fs.ModeSymlink != 0:
			return fmt.Errorf("symbolic links are not accepted in runtime state: %s", filepath.ToSlash(p))
		case err == nil && !info.IsDir():
			return fmt.Errorf("not a directory: %s", filepath.ToSlash(p))
		case err == nil:
			continue
		case !errors.Is(err, fs.ErrNotExist):
			return err
		}
		if err := root.Mkdir(p, privateDirMode); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		if err := root.Chmod(p, privateDirMode); err != nil {
			return err
		}
	}
	return nil
}

// Deps is what todo needs of the Host.
type Deps struct {
	// Home is the runtime home: todo keeps its per-session state under
	// <Home>/runtime/session-state/<sha256(session id)>/todo.json.
	Home string
}
