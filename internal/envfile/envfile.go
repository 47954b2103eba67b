// Package envfile reads and edits the runtime home's private .env file
// (spec surfaces §5.3): the secrets a newcomer would otherwise export in
// every shell.
//
// The file is KEY=VALUE lines. Blank lines and lines starting with # are
// ignored; an optional "export " prefix is accepted; a key is
// [A-Za-z_][A-Za-z0-9_]*; the line splits at its first "=", and key and
// value are trimmed. A value whose first and last characters are the same
// quote is quoted: '…' is literal (only \' is unescaped), "…" knows the
// escapes \n \r \t \" \\ (any other \x is x; a trailing lone backslash is
// kept). An unquoted value loses an inline comment that starts at a # that
// is first or follows whitespace. Later duplicates win. The first bad line
// fails the whole file.
//
// Load refuses a file that is a symbolic link or that anyone but its owner
// may read or write. The values go to the caller only: nothing here
// touches the process environment, so the children a Host starts never
// inherit them.
//
// envfile imports only the root package; callers write the rendered file
// (Upsert) through their own atomic writer.
package envfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"slices"
	"strings"

	"github.com/demiurge/demiurge"
)

// File is a loaded .env file.
type File struct {
	// Path is where it was read from; Exists reports whether it was there.
	Path   string
	Exists bool
	// Values maps each key to its value (later duplicates won).
	Values map[string]string
}

// Keys returns the file's keys, sorted.
func (f *File) Keys() []string {
	if f == nil {
		return nil
	}
	keys := make([]string, 0, len(f.Values))
	for k := range f.Values {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Lookup returns the value of key and whether the file sets it.
func (f *File) Lookup(key string) (string, bool) {
	if f == nil {
		return "", false
	}
	v, ok := f.Values[key]
	return v, ok
}

// Load reads path. A missing file is an empty File. Errors are ECONFIG and
// name the file: a symbolic link, a mode wider than 0600 (on Unix), an
// unreadable file, or the first bad line ("<path>:<n>: invalid .env line
// <n>: expected KEY=VALUE").
func Load(path string) (*File, error) {
	f := &File{Path: path, Values: map[string]string{}}
	st, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return nil, demiurge.WrapError(demiurge.ECONFIG, err, "%s: cannot read: %s", path, demiurge.IOReason(err))
	}
	if err := CheckMode(path, st); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, demiurge.WrapError(demiurge.ECONFIG, err, "%s: cannot read: %s", path, demiurge.IOReason(err))
	}
	// The file may have been replaced between Lstat and ReadFile; check
	// what was read.
	if st2, err := os.Lstat(path); err != nil || !os.SameFile(st, st2) {
		return nil, demiurge.Errorf(demiurge.ECONFIG, "%s: changed while it was read; try again", path)
	}
	vals, err := Parse(data)
	if err != nil {
		return nil, demiurge.WrapError(demiurge.ECONFIG, err, "%s:%s", path, demiurge.ErrorMessage(err))
	}
	f.Exists, f.Values = true, vals
	return f, nil
}

// CheckMode refuses a .env that is a symbolic link, not a regular file, or
// (on Unix) readable or writable by anyone but its owner.
func CheckMode(path string, st fs.FileInfo) error {
	switch {
	case st.Mode()&fs.ModeSymlink != 0:
		return demiurge.Errorf(demiurge.ECONFIG, "%s: is a symbolic link; the .env file must be a regular file of the runtime home", path)
	case !st.Mode().IsRegular():
		return demiurge.Errorf(demiurge.ECONFIG, "%s: is not a regular file", path)
	case runtime.GOOS != "windows" && st.Mode().Perm()&0o077 != 0:
		return demiurge.Errorf(demiurge.ECONFIG, "%s: mode %04o is readable or writable by others; run `chmod 600 %s` (or `demiurge doctor --repair`)", path, st.Mode().Perm(), path)
	}
	return nil
}

// Parse reads the lines of a .env file. The error is EINVALID
// "<n>: invalid .env line <n>: …" for the first bad line, and never quotes
// the line (it may hold a secret).
func Parse(data []byte) (map[string]string, error) {
	vals := map[string]string{}
	for i, line := range strings.Split(string(data), "\n") {
		n := i + 1
		key, value, ok, err := parseLine(strings.TrimSuffix(line, "\r"))
		if err != nil {
			return nil, demiurge.Errorf(demiurge.EINVALID, "%d: invalid .env line %d: %s", n, n, err)
		}
		if ok {
			vals[key] = value
		}
	}
	return vals, nil
}

// parseLine reads one line; ok is false for a blank or comment line.
func parseLine(line string) (key, value string, ok bool, err error) {
	s := strings.TrimSpace(line)
	if s == "" || strings.HasPrefix(s, "#") {
		return "", "", false, nil
	}
	if rest, found := strings.CutPrefix(s, "export "); found {
		s = strings.TrimSpace(rest)
	}
	k, v, found := strings.Cut(s, "=")
	if !found {
		return "", "", false, errors.New("expected KEY=VALUE")
	}
	key = strings.TrimSpace(k)
	if !ValidKey(key) {
		return "", "", false, fmt.Errorf("invalid key %q", key)
	}
	return key, unquote(strings.TrimSpace(v)), true, nil
}

// ValidKey reports whether k is a variable name: [A-Za-z_][A-Za-z0-9_]*.
func ValidKey(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		letter := c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z')
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

func unquote(v string) string {
	if len(v) >= 2 && v[0] == v[len(v)-1] && (v[0] == '\'' || v[0] == '"') {
		inner := v[1 : len(v)-1]
		if v[0] == '\'' {
			return strings.ReplaceAll(inner, `\'`, `'`)
		}
		var b strings.Builder
		for i := 0; i < len(inner); i++ {
			c := inner[i]
			if c != '\\' || i == len(inner)-1 {
				b.WriteByte(c)
				continue
			}
			i++
			switch inner[i] {
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			default:
				b.WriteByte(inner[i])
			}
		}
		return b.String()
	}
	// An inline comment starts at a # that is first or follows whitespace.
	for i := 0; i < len(v); i++ {
		if v[i] == '#' && (i == 0 || v[i-1] == ' ' || v[i-1] == '\t') {
			return strings.TrimSpace(v[:i])
		}
	}
	return v
}

// Quote renders value as a double-quoted .env value.
func Quote(value string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`)
	return `"` + r.Replace(value) + `"`
}

// Upsert returns data with key set to value: the first line that sets key
// (with or without "export ") is replaced by KEY="<escaped>", later lines
// that set it are dropped, and every other line and comment is kept;
// without such a line the assignment is appended, after a blank line when
// the file does not end with one. Lines it cannot parse are kept as they
// are (Parse reports them).
func Upsert(data []byte, key, value string) []byte {
	assign := key + "=" + Quote(value)
	var out []string
	lines := strings.Split(string(data), "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	done := false
	for _, line := range lines {
		k, _, ok, err := parseLine(strings.TrimSuffix(line, "\r"))
		if err == nil && ok && k == key {
			if !done {
				out = append(out, assign)
				done = true
			}
			continue
		}
		out = append(out, line)
	}
	if !done {
		if len(out) > 0 && strings.TrimSpace(out[len(out)-1]) != "" {
			out = append(out, "")
		}
		out = append(out, assign)
	}
	return []byte(strings.Join(out, "\n") + "\n")
}

// Layer returns a getenv that reads the explicit environment first and the
// file second: a variable set (non-empty) in the environment wins over the
// file.
func Layer(getenv func(string) string, f *File) func(string) string {
	if f == nil {
		return getenv
	}
	return func(k string) string {
		if v := getenv(k); v != "" {
			return v
		}
		return f.Values[k]
	}
}
