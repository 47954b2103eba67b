package cmdguard

import "strings"

// Limits on the expansions the destructive-pattern search performs itself.
const (
	maxVarValue   = 4096 // longer assignments are not tracked
	maxBraceWords = 64   // words one brace expression may expand to
	maxBraceWord  = 4096 // longer words are not brace-expanded
)

// isAssignment reports an assignment word: NAME=value, NAME+=value, or
// an array element NAME[subscript]=value (bash takes all of them before a
// command, so "a[1]=2 rm -rf /" runs rm).
func isAssignment(s string) bool {
	i := 0
	for i < len(s) && isNameByte(s[i], i == 0) {
		i++
	}
	if i == 0 {
		return false
	}
	if i < len(s) && s[i] == '[' {
		end := strings.IndexByte(s[i:], ']')
		if end < 0 {
			return false
		}
		i += end + 1
	}
	if i < len(s) && s[i] == '+' {
		i++
	}
	return i < len(s) && s[i] == '='
}

// baseName is the last component of a slash path ("/usr/bin/rm" -> "rm",
// "dir/" -> "dir"); "", "/" and "." have none.
func baseName(s string) string {
	s = strings.TrimRight(s, "/")
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		s = s[i+1:]
	}
	if s == "." {
		return ""
	}
	return s
}

// expandWords performs the expansions an attacker can use to spell a
// destructive command indirectly: $IFS and literal variables assigned
// earlier in the same text ("a=rm; $a -rf /"), with field splitting of
// unquoted results, and brace expansion of unquoted words
// ("{rm,-rf,/}"). Everything else stays literal.
func expandWords(words []word, vars map[string]string) []string {
	out := make([]string, 0, len(words))
	for _, w := range words {
		t := w.text
		if !w.single && strings.IndexByte(t, '$') >= 0 {
			expanded, changed := substituteParams(t, vars)
			if changed {
				if w.quoted {
					out = append(out, expanded)
				} else {
					out = append(out, strings.Fields(expanded)...)
				}
				continue
			}
		}
		if !w.quoted && strings.IndexByte(t, '{') >= 0 {
			out = append(out, braceExpand(t)...)
			continue
		}
		out = append(out, t)
	}
	return out
}

// substituteParams replaces $NAME and ${NAME} when NAME is IFS (by a
// space) or a tracked variable; other parameters stay literal.
func substituteParams(t string, vars map[string]string) (string, bool) {
	var b strings.Builder
	changed := false
	last := 0
	for i := 0; i < len(t); i++ {
		if t[i] != '$' || i+1 >= len(t) {
			continue
		}
		start, braced := i+1, t[i+1] == '{'
		if braced {
			start++
		}
		end := start
		for end < len(t) && isNameByte(t[end], end == start) {
			end++
		}
		if end == start || (braced && (end >= len(t) || t[end] != '}')) {
			continue
		}
		name := t[start:end]
		value, ok := vars[name]
		if name == "IFS" {
			value, ok = " ", true
		}
		if !ok {
			continue
		}
		if braced {
			end++
		}
		b.WriteString(t[last:i])
		b.WriteString(value)
		last = end
		i = end - 1
		changed = true
	}
	if !changed {
		return t, false
	}
	b.WriteString(t[last:])
	return b.String(), true
}

func isNameByte(c byte, first bool) bool {
	return c == '_' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || (!first && '0' <= c && c <= '9')
}

// recordAssignments remembers NAME=value words at the start of a command
// (also after export/declare/local/readonly/typeset) and the words a for or
// select loop gives its variable.
func recordAssignments(words []word, vars map[string]string) {
	if len(words) >= 3 && (words[0].text == "for" || words[0].text == "select") && words[2].text == "in" {
		// The loop body sees NAME as each word in turn; recorded joined,
		// an unquoted $NAME expands to all of them.
		vals := make([]string, 0, len(words)-3)
		for _, v := range words[3:] {
			vals = append(vals, v.text)
		}
		vars[words[1].text] = strings.Join(vals, " ")
		return
	}
	i := 0
	if i < len(words) && !words[i].quoted {
		switch words[i].text {
		case "export", "declare", "local", "readonly", "typeset":
			i++
			for i < len(words) && strings.HasPrefix(words[i].text, "-") {
				i++
			}
		}
	}
	for ; i < len(words); i++ {
		t := words[i].text
		if !isAssignment(t) {
			return
		}
		name, value, _ := strings.Cut(t, "=")
		if strings.ContainsAny(name, "[+") {
			continue // an element or an append: not a literal value of NAME
		}
		if !words[i].single {
			value, _ = substituteParams(value, vars)
		}
		if len(value) <= maxVarValue {
			vars[name] = value
		}
	}
}

// braceExpand expands comma brace expressions ("r{m,} -> rm r") up to
// maxBraceWords results. "${...}" and braces without a top-level comma are
// literal.
func braceExpand(s string) []string {
	if len(s) > maxBraceWord {
		return []string{s}
	}
	out := make([]string, 0, 2)
	braceExpandInto(s, &out)
	return out
}

func braceExpandInto(s string, out *[]string) {
	if len(*out) >= maxBraceWords {
		return
	}
	for i := 0; i < len(s); i++ {
		if s[i] != '{' || (i > 0 && s[i-1] == '$') {
			continue
		}
		end, parts := braceParts(s, i)
		if end < 0 || len(parts) < 2 {
			continue
		}
		for _, p := range parts {
			braceExpandInto(s[:i]+p+s[end+1:], out)
			if len(*out) >= maxBraceWords {
				return
			}
		}
		return
	}
	*out = append(*out, s)
}

// braceParts returns the index of the '}' matching the '{' at start and the
// comma-separated parts between them (nested braces kept whole).
func braceParts(s string, start int) (int, []string) {
	depth := 0
	last := start + 1
	var parts []string
	for i := start; i < len(s); i++ {
		switch s[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return i, append(parts, s[last:i])
			}
		case ',':
			if depth == 1 {
				parts = append(parts, s[last:i])
				last = i + 1
			}
		}
	}
	return -1, nil
}
