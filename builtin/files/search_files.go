package files

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/demiurge/demiurge/builtin/internal/textread"
	"github.com/demiurge/demiurge/builtin/internal/tool"
	"github.com/demiurge/demiurge/builtin/internal/workspace"
	"github.com/demiurge/demiurge/effect"
)

// Limits of search_files (spec tool-runtime §1.3, plus an entry budget so
// that a search of a huge tree ends).
const (
	defaultSearchResults = 50
	maxSearchResults     = 200
	searchFileChars      = 200000 // characters of each file searched
	searchLineChars      = 300    // characters of a matching line shown
	maxSearchEntries     = 100000 // directory entries visited per call
	// sensitiveProbeEntries bounds how far an include_sensitive search
	// looks for a sensitive file before approval (spec: the first 500
	// descendants); a tree larger than that is asked about unseen.
	sensitiveProbeEntries = 500
)

// searchEntryBudget is maxSearchEntries; tests lower it.
var searchEntryBudget = maxSearchEntries

var searchTargets = []string{"content", "name", "both"}

func SearchFiles(d Deps) effect.Definition {
	return effect.Definition{
		Name: "search_files",
		Description: "Search files by content or file name. Use target='content' for text matches, " +
			"target='name' for file discovery, or target='both' when either is useful.",
		Schema: tool.ObjectSchema(map[string]any{
			"query":             map[string]any{"type": "string", "description": "Text to find (a substring, not a regular expression)."},
			"path":              map[string]any{"type": "string", "default": ".", "description": "File or directory to search, relative to the workspace."},
			"target":            map[string]any{"type": "string", "enum": searchTargets, "default": "content"},
			"pattern":           map[string]any{"type": "string", "default": "*", "maxLength": maxPatternBytes, "description": "Shell pattern the file's path or name must match."},
			"case_sensitive":    map[string]any{"type": "boolean", "default": true},
			"max_results":       map[string]any{"type": "integer", "minimum": 1, "maximum": maxSearchResults, "default": defaultSearchResults},
			"include_sensitive": map[string]any{"type": "boolean", "default": false, "description": "Also search sensitive files (credentials, keys, .env, .git), which are skipped otherwise."},
		}),
		Source:         effect.SourceBuiltin,
		Risk:           "low",
		Capability:     "fs.read",
		ApprovalPolicy: effect.ApprovalAuto,
		Adapter: pathTool[searchArgs]{
			deps: d, op: workspace.OpRead, action: "search", summary: "Search files under %s",
			path:  func(a searchArgs) string { return cmp.Or(a.Path, ".") },
			wide:  func(a searchArgs) bool { return a.IncludeSensitive },
			flag:  "include_sensitive",
			check: searchArgsError,
			run:   runSearchFiles,
		}.adapter(searchArgs{CaseSensitive: true}),
	}
}

type searchArgs struct {
	Query            string `json:"query"`
	Path             string `json:"path"`
	Target           string `json:"target"`
	Pattern          string `json:"pattern"`
	CaseSensitive    bool   `json:"case_sensitive"`
	MaxResults       int64  `json:"max_results"`
	IncludeSensitive bool   `json:"include_sensitive"`
}

// kind is the target argument as the original reads it: trimmed,
// lowercased, "content" when absent.
func (a searchArgs) kind() string {
	return cmp.Or(strings.ToLower(strings.TrimSpace(a.Target)), "content")
}

// searchArgsError is search_files' own check of its arguments, in the
// original's order (spec tool-runtime §1.3), before any path is looked at.
func searchArgsError(a searchArgs) string {
	kind := a.kind()
	if !slices.Contains(searchTargets, kind) {
		return fmt.Sprintf("unsupported search target: %s", kind)
	}
	if a.Query == "" && kind != "name" {
		return "query is required for content search"
	}
	if len(a.Pattern) > maxPatternBytes {
		return fmt.Sprintf("invalid pattern: %d bytes, limit %d", len(a.Pattern), maxPatternBytes)
	} else if _, err := compileGlob(cmp.Or(a.Pattern, "*")); err != nil {
		return fmt.Sprintf("invalid pattern: %s", a.Pattern)
	}
	return ""
}

// searcher is the state of one search. The walk is depth-first in the
// order of the full slash paths (a directory's entries sorted, a directory
// keyed as "<name>/"), so results come in the order a sorted listing of the
// whole tree would give, without building that listing. Each file is read
// through one reused buffer, at most searchFileChars characters of it,
// and searched as text: a NUL byte is a character like any other, as in
// the original (spec tool-runtime §1.3 names no binary files).
//
// Every entry lies under scope, the real directory the os.Root is opened
// at: the workspace for a search inside it, the search root itself for one
// outside (spec: entries of an outside search must stay under it). Paths
// private to the Host are never entered, sensitive ones only with
// include_sensitive.
type searcher struct {
	ctx           context.Context
	w             *workspace.Workspace
	root          *os.Root
	scope         string // real directory of root
	outside       bool   // entries are shown by their absolute path
	sensitive     bool   // include_sensitive
	target        string // content | name | both
	query         string
	needle        []byte // query, lowercased unless caseSensitive
	caseSensitive bool
	glob          *regexp.Regexp
	max           int
	budget        int // directory entries the walk may visit

	// probe: look for a sensitive entry instead of matching (found).
	probe bool
	found bool

	entries int  // directory entries visited
	limited bool // the entry budget ran out
	lines   []string
	matches []map[string]any

	rr    *textread.Reader
	text  bytes.Buffer
	lower []byte
}

// searchScope opens the directory a search of t walks and returns the
// searcher's root, its real path and the name under it to start from.
func searchScope(w *workspace.Workspace, t workspace.Target) (*os.Root, string, string, fs.FileInfo, effect.Outcome, bool) {
	dir, name := t.DirAndName(w)
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, "", "", nil, tool.Invalid("search failed: %s: %s", t.Show, tool.IOReason(err)), false
	}
	info, err := root.Lstat(name)
	if err != nil {
		root.Close()
		if os.IsNotExist(err) {
			return nil, "", "", nil, tool.Invalid("path does not exist: %s", t.Show), false
		}
		return nil, "", "", nil, tool.Invalid("search failed: %s: %s", t.Show, tool.IOReason(err)), false
	}
	if t.Outside && info.IsDir() && name != "." {
		root.Close()
		if root, err = os.OpenRoot(t.Abs); err != nil {
			return nil, "", "", nil, tool.Invalid("search failed: %s: %s", t.Show, tool.IOReason(err)), false
		}
		dir, name = t.Abs, "."
	}
	return root, dir, name, info, effect.Outcome{}, true
}

func runSearchFiles(ctx context.Context, c *pathCall[searchArgs]) (effect.Outcome, error) {
	w, t, a := c.w, c.t, c.args
	kind, query := a.kind(), a.Query
	glob, _ := compileGlob(cmp.Or(a.Pattern, "*"))
	root, scope, start, info, out, ok := searchScope(w, t)
	if !ok {
		return out, nil
	}
	defer root.Close()

	caseSensitive := a.CaseSensitive
	s := &searcher{
		ctx: ctx, w: w, root: root, scope: scope, outside: t.Outside,
		sensitive: a.IncludeSensitive, target: kind, query: query,
		needle: []byte(query), caseSensitive: caseSensitive, glob: glob,
		max:    int(tool.Positive(a.MaxResults, defaultSearchResults, maxSearchResults)),
		budget: searchEntryBudget,
	}
	var release func()
	s.rr, release = textread.Pooled(nil)
	defer release()
	if !caseSensitive {
		s.needle = lowerInto(nil, s.needle)
	}
	if err := s.run(start, info); err != nil {
		return effect.Outcome{}, err
	}

	content := strings.Join(s.lines, "\n")
	if content == "" {
		content = "(no matches)"
	}
	data := map[string]any{"matches": s.matches, "truncated": len(s.matches) >= s.max}
	if s.limited {
		data["entries_limit_reached"] = true
		content += fmt.Sprintf("\n[search stopped after %d entries; narrow path or pattern]", searchEntryBudget)
	}
	if s.matches == nil {
		data["matches"] = []map[string]any{}
	}
	return tool.Succeeded(content, data), nil
}

// run searches the file or the tree at start (relative to the scope).
func (s *searcher) run(start string, info fs.FileInfo) error {
	switch {
	case info.Mode().IsRegular():
		s.file(start)
	case info.IsDir():
		return s.walk(start)
	}
	return nil
}

// sensitiveBelow reports whether a read of t with include_sensitive
// would reach a sensitive file: a sensitive entry among the first
// sensitiveProbeEntries below t, or more entries than that (unseen, so
// counted as sensitive: the operator is asked rather than not).
func sensitiveBelow(w *workspace.Workspace, t workspace.Target) bool {
	root, scope, start, info, _, ok := searchScope(w, t)
	if !ok {
		return false // nothing there to read
	}
	defer root.Close()
	s := &searcher{
		ctx: context.Background(), w: w, root: root, scope: scope, outside: t.Outside,
		sensitive: true, probe: true, max: 1, budget: sensitiveProbeEntries,
	}
	if err := s.run(start, info); err != nil {
		return true
	}
	return s.found || s.limited
}

func (s *searcher) done() bool { return len(s.matches) >= s.max || s.limited || s.found }

// show names an entry (relative to the scope) in results.
func (s *searcher) show(rel string) string {
	if s.outside {
		return filepath.ToSlash(filepath.Join(s.scope, rel))
	}
	return filepath.ToSlash(rel)
}

// walk searches the directory dir (relative to the scope). Host-private
// and (unless include_sensitive) sensitive directories are not entered;
// symbolic links are followed to files only, and only when they stay
// under the scope and out of the Host's private paths.
func (s *searcher) walk(dir string) error {
	f, err := s.root.Open(dir)
	if err != nil {
		return nil // unreadable directories are skipped, as a listing would
	}
	entries, _ := f.ReadDir(-1)
	f.Close()
	sort.Slice(entries, func(i, j int) bool { return walkKey(entries[i]) < walkKey(entries[j]) })
	for _, e := range entries {
		if s.done() {
			return nil
		}
		if err := s.ctx.Err(); err != nil {
			return err
		}
		if s.entries++; s.entries > s.budget {
			s.limited = true
			return nil
		}
		rel := filepath.Join(dir, e.Name())
		if s.w.Hides(filepath.Join(s.scope, rel)) {
			continue
		}
		switch typ := e.Type(); {
		case typ&fs.ModeSymlink != 0:
			real, err := workspace.RealPath(filepath.Join(s.scope, rel))
			if err != nil || !workspace.Within(s.scope, real) || s.w.Hides(real) {
				continue
			}
			realRel, err := filepath.Rel(s.scope, real)
			if err != nil {
				continue
			}
			if info, err := s.root.Lstat(realRel); err == nil && info.Mode().IsRegular() {
				s.file(realRel)
			}
		case e.IsDir():
			if workspace.SensitiveDir(e.Name()) && !s.admitSensitive() {
				continue
			}
			if err := s.walk(rel); err != nil {
				return err
			}
		case typ.IsRegular():
			s.file(rel)
		}
	}
	return nil
}

// admitSensitive decides on a sensitive entry: a probe has found what it
// looks for; a search enters it only with include_sensitive.
func (s *searcher) admitSensitive() bool {
	if s.probe {
		s.found = true
		return false
	}
	return s.sensitive
}

// walkKey orders siblings so that a depth-first walk visits paths in the
// order of their full slash form: "a.txt" < "a/b" because '.' < '/'.
func walkKey(e fs.DirEntry) string {
	if e.IsDir() {
		return e.Name() + "/"
	}
	return e.Name()
}

// file matches one regular file (relative to the scope): its name, then
// its content.
func (s *searcher) file(rel string) {
	show := s.show(rel)
	if workspace.IsSensitive(show, false) && !s.admitSensitive() {
		return
	}
	if s.probe {
		return
	}
	if !s.glob.MatchString(show) && !s.glob.MatchString(path.Base(show)) {
		return
	}
	if s.target != "content" {
		hay := show
		if !s.caseSensitive {
			hay = string(lowerInto(nil, []byte(show)))
		}
		if s.query == "" || strings.Contains(hay, string(s.needle)) {
			s.lines = append(s.lines, show)
			s.matches = append(s.matches, map[string]any{"type": "name", "path": show, "is_dir": false})
			if s.done() {
				return
			}
		}
	}
	if s.target != "name" {
		s.content(rel, show)
	}
}

// content searches the first searchFileChars characters of a file line by
// line, invalid UTF-8 read as U+FFFD.
func (s *searcher) content(rel, show string) {
	f, err := s.root.Open(rel)
	if err != nil {
		return
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		return
	}
	s.rr.Reset(f)
	s.text.Reset()
	if _, err := s.rr.Take(searchFileChars, &s.text); err != nil {
		return
	}
	text := s.text.Bytes()
	for lineNo := 1; len(text) > 0; lineNo++ {
		line := text
		i := bytes.IndexAny(text, "\r\n")
		if i >= 0 {
			line = text[:i]
			if text[i] == '\r' && i+1 < len(text) && text[i+1] == '\n' {
				i++
			}
			text = text[i+1:]
		} else {
			text = nil
		}
		hay := line
		if !s.caseSensitive {
			s.lower = lowerInto(s.lower[:0], line)
			hay = s.lower
		}
		if !bytes.Contains(hay, s.needle) {
			continue
		}
		shown := tool.FirstChars(string(line), searchLineChars)
		s.lines = append(s.lines, fmt.Sprintf("%s:%d: %s", show, lineNo, shown))
		s.matches = append(s.matches, map[string]any{"type": "content", "path": show, "line": lineNo, "text": shown})
		if s.done() {
			return
		}
	}
}

// lowerInto appends the lowercase form of src to dst.
func lowerInto(dst, src []byte) []byte {
	for i := 0; i < len(src); {
		c := src[i]
		if c < utf8.RuneSelf {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			dst = append(dst, c)
			i++
			continue
		}
		r, size := utf8.DecodeRune(src[i:])
		dst = utf8.AppendRune(dst, unicode.ToLower(r))
		i += size
	}
	return dst
}
