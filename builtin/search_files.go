package builtin

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/demiurge/demiurge/effect"
)

// Limits of search_files (spec tool-runtime §1.3, plus an entry budget so
// that a search of a huge tree ends).
const (
	defaultSearchResults = 50
	maxSearchResults     = 200
	searchFileChars      = 200000 // characters of each file searched
	searchLineChars      = 300    // characters of a matching line shown
	binarySniffBytes     = 8 << 10
	maxSearchEntries     = 100000 // directory entries visited per call
)

// searchEntryBudget is maxSearchEntries; tests lower it.
var searchEntryBudget = maxSearchEntries

var searchTargets = []string{"content", "name", "both"}

func searchFiles(d Deps) effect.Definition {
	return effect.Definition{
		Name: "search_files",
		Description: "Search files in the workspace by content or file name. Use target='content' for text matches, " +
			"target='name' for file discovery, or target='both' when either is useful.",
		Schema: objectSchema(map[string]any{
			"query":             map[string]any{"type": "string", "description": "Text to find (a substring, not a regular expression)."},
			"path":              map[string]any{"type": "string", "default": ".", "description": "File or directory to search, relative to the workspace."},
			"target":            map[string]any{"type": "string", "enum": searchTargets, "default": "content"},
			"pattern":           map[string]any{"type": "string", "default": "*", "maxLength": maxPatternBytes, "description": "Shell pattern the file's path or name must match."},
			"case_sensitive":    map[string]any{"type": "boolean", "default": true},
			"max_results":       map[string]any{"type": "integer", "minimum": 1, "maximum": maxSearchResults, "default": defaultSearchResults},
			"include_sensitive": map[string]any{"type": "boolean", "default": false, "description": "Sensitive files (credentials, keys, .env, .git) are never searched; true is refused."},
		}),
		Source:         effect.SourceBuiltin,
		Risk:           "low",
		Capability:     "fs.read",
		ApprovalPolicy: effect.ApprovalAuto,
		Adapter: pathTool{deps: d, op: opRead, arg: "path", def: ".", action: "fs.read", AdapterFunc: effect.AdapterFunc(func(ctx context.Context, inv effect.Invocation) (effect.Outcome, error) {
			return runSearchFiles(ctx, inv, d)
		})},
	}
}

// searcher is the state of one search. The walk is depth-first in the
// order of the full slash paths (a directory's entries sorted, a directory
// keyed as "<name>/"), so results come in the order a sorted listing of the
// whole tree would give, without building that listing. Each file is read
// through one reused buffer, at most searchFileChars characters of it.
type searcher struct {
	ctx           context.Context
	w             *workspace
	root          *os.Root
	target        string // content | name | both
	query         string
	needle        []byte // query, lowercased unless caseSensitive
	caseSensitive bool
	glob          *regexp.Regexp
	max           int

	entries int  // directory entries visited
	limited bool // the entry budget ran out
	lines   []string
	matches []map[string]any

	rr    *runeReader
	text  bytes.Buffer
	lower []byte
}

func runSearchFiles(ctx context.Context, inv effect.Invocation, d Deps) (effect.Outcome, error) {
	query := stringArg(inv.Args, "query")
	kind := strings.ToLower(strings.TrimSpace(stringArg(inv.Args, "target")))
	if kind == "" {
		kind = "content"
	}
	switch kind {
	case "content", "name", "both":
	default:
		return invalid("unsupported search target: %s", kind), nil
	}
	if query == "" && kind != "name" {
		return invalid("query is required for content search"), nil
	}
	if boolArg(inv.Args, "include_sensitive", false) {
		return denied("sensitive_path", "sensitive path denied: sensitive files are never searched (include_sensitive)"), nil
	}
	pattern := stringArg(inv.Args, "pattern")
	if pattern == "" {
		pattern = "*"
	}
	if len(pattern) > maxPatternBytes {
		return invalid("invalid pattern: %d bytes, limit %d", len(pattern), maxPatternBytes), nil
	}
	glob, err := compileGlob(pattern)
	if err != nil {
		return invalid("invalid pattern: %s", pattern), nil
	}
	w, out, ok := openWorkspace(inv, d)
	if !ok {
		return out, nil
	}
	p := stringArg(inv.Args, "path")
	if p == "" {
		p = "."
	}
	t, out, ok := w.resolve(p, opRead)
	if !ok {
		return out, nil
	}
	root, err := w.openRoot()
	if err != nil {
		return invalid("search failed: %s: %s", t.show, ioReason(err)), nil
	}
	defer root.Close()
	info, err := root.Lstat(t.rel)
	if os.IsNotExist(err) {
		return invalid("path does not exist: %s", t.show), nil
	}
	if err != nil {
		return invalid("search failed: %s: %s", t.show, ioReason(err)), nil
	}

	caseSensitive := boolArg(inv.Args, "case_sensitive", true)
	s := &searcher{
		ctx: ctx, w: w, root: root, target: kind, query: query,
		needle: []byte(query), caseSensitive: caseSensitive, glob: glob,
		max: int(positiveInt(inv.Args, "max_results", defaultSearchResults, maxSearchResults)),
	}
	var release func()
	s.rr, release = pooledRuneReader(nil)
	defer release()
	if !caseSensitive {
		s.needle = lowerInto(nil, s.needle)
	}
	switch {
	case info.Mode().IsRegular():
		s.file(t.rel, t.show)
	case info.IsDir():
		if err := s.walk(t.rel); err != nil {
			return effect.Outcome{}, err
		}
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
	return succeeded(content, data), nil
}

func (s *searcher) done() bool { return len(s.matches) >= s.max || s.limited }

// walk searches the directory dir (relative to the root). Sensitive
// directories are not entered; symbolic links are followed to files only,
// and only when they stay inside the workspace.
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
		if s.entries++; s.entries > searchEntryBudget {
			s.limited = true
			return nil
		}
		rel := filepath.Join(dir, e.Name())
		switch typ := e.Type(); {
		case typ&fs.ModeSymlink != 0:
			real, err := realPath(filepath.Join(s.w.root, rel))
			if err != nil || !within(s.w.root, real) {
				continue
			}
			realRel, err := filepath.Rel(s.w.root, real)
			if err != nil {
				continue
			}
			if info, err := s.root.Lstat(realRel); err == nil && info.Mode().IsRegular() {
				s.file(realRel, filepath.ToSlash(realRel))
			}
		case e.IsDir():
			if sensitiveDir(strings.ToLower(e.Name())) {
				continue
			}
			if err := s.walk(rel); err != nil {
				return err
			}
		case typ.IsRegular():
			s.file(rel, filepath.ToSlash(rel))
		}
	}
	return nil
}

// walkKey orders siblings so that a depth-first walk visits paths in the
// order of their full slash form: "a.txt" < "a/b" because '.' < '/'.
func walkKey(e fs.DirEntry) string {
	if e.IsDir() {
		return e.Name() + "/"
	}
	return e.Name()
}

// file matches one regular file: its name, then its content.
func (s *searcher) file(rel, show string) {
	if isSensitive(show, false) {
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
// line. Files whose first binarySniffBytes hold a NUL byte are binary and
// skipped.
func (s *searcher) content(rel, show string) {
	f, err := s.root.Open(rel)
	if err != nil {
		return
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		return
	}
	s.rr.reset(f)
	if bytes.IndexByte(s.rr.peek(binarySniffBytes), 0) >= 0 {
		return
	}
	s.text.Reset()
	if _, err := s.rr.take(searchFileChars, &s.text); err != nil {
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
		shown := firstChars(string(line), searchLineChars)
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
