package mcp

import (
	"strconv"
	"strings"
)

// Name limits of MCP tools.
const (
	maxPrefixLen   = 30
	MaxToolNameLen = 64
	nameSeparator  = "__"
)

// sanitizeName replaces every character outside [A-Za-z0-9_-] with '-';
// an empty result becomes fallback, and a result that does not start with
// a letter gets fallback+"-" in front.
func sanitizeName(s, fallback string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isNameByte(c) {
			b.WriteByte(c)
		} else {
			b.WriteByte('-')
			// A multi-byte character is one character: one '-'.
			if c >= 0x80 {
				for i+1 < len(s) && s[i+1]&0xC0 == 0x80 {
					i++
				}
			}
		}
	}
	out := b.String()
	if out == "" {
		return fallback
	}
	if !isLetter(out[0]) {
		out = fallback + "-" + out
	}
	return out
}

func isNameByte(c byte) bool {
	return isLetter(c) || (c >= '0' && c <= '9') || c == '_' || c == '-'
}

func isLetter(c byte) bool { return (c|0x20) >= 'a' && (c|0x20) <= 'z' }

// namer hands out the server prefixes and tool names of one catalog,
// deterministically from the order in which it is asked.
type namer struct {
	prefixes map[string]bool // lowercased prefixes taken
	names    map[string]bool // lowercased tool names taken
}

func newNamer() *namer {
	return &namer{prefixes: map[string]bool{}, names: map[string]bool{}}
}

// prefix reserves the prefix of one server: its sanitised id cut to 30
// characters, unique ignoring case with "-2", "-3", ... (the base cut again
// so the whole still fits).
func (n *namer) prefix(serverID string) string {
	base := cut(sanitizeName(serverID, "mcp"), maxPrefixLen)
	return unique(base, maxPrefixLen, n.prefixes)
}

// serverPrefixes reserves the prefix of every enabled server of decls, in
// declaration order, so one server's failure never renames another's
// tools. It maps server id to prefix.
func (n *namer) serverPrefixes(decls []Declaration) map[string]string {
	out := make(map[string]string, len(decls))
	for _, d := range decls {
		if d.Enabled {
			out[d.ID] = n.prefix(d.ID)
		}
	}
	return out
}

// tool reserves the catalog name of one tool of the server with prefix:
// prefix + "__" + the sanitised tool name, at most 64 characters, unique
// ignoring case among the names reserved so far.
func (n *namer) tool(prefix, rawName string) string {
	room := MaxToolNameLen - len(prefix) - len(nameSeparator)
	part := cut(sanitizeName(rawName, "tool"), room)
	full := unique(prefix+nameSeparator+part, MaxToolNameLen, n.names)
	return full
}

// unique returns base, or base cut and suffixed "-k" for the smallest k ≥ 2
// whose result is not taken (ignoring case), and marks the result taken.
func unique(base string, limit int, taken map[string]bool) string {
	name := base
	for k := 2; taken[strings.ToLower(name)]; k++ {
		suffix := "-" + strconv.Itoa(k)
		name = cut(base, limit-len(suffix)) + suffix
	}
	taken[strings.ToLower(name)] = true
	return name
}

// cut returns the first n bytes of s (s is ASCII after sanitising).
func cut(s string, n int) string {
	if n < 0 {
		n = 0
	}
	if len(s) > n {
		return s[:n]
	}
	return s
}

// allowedTool applies the include and exclude filters to a server's raw
// tool name: include (when not empty) must match one pattern, exclude must
// match none.
func allowedTool(name string, include, exclude []string) bool {
	if len(include) > 0 {
		ok := false
		for _, p := range include {
			if matchPattern(p, name) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	for _, p := range exclude {
		if matchPattern(p, name) {
			return false
		}
	}
	return true
}

// matchPattern reports whether name matches pattern: exact equality unless
// the pattern holds '*', which matches any sequence (empty included).
// Matching is case-sensitive; '?' and brackets are literal.
func matchPattern(pattern, name string) bool {
	if !strings.Contains(pattern, "*") {
		return pattern == name
	}
	parts := strings.Split(pattern, "*")
	if !strings.HasPrefix(name, parts[0]) {
		return false
	}
	rest := name[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, mid := range parts[1 : len(parts)-1] {
		i := strings.Index(rest, mid)
		if i < 0 {
			return false
		}
		rest = rest[i+len(mid):]
	}
	return len(rest) >= len(last) && strings.HasSuffix(rest, last)
}
