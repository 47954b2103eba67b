package redact

import "strings"

// Credentials recognised inside free text. The rules are hand-written
// scanners anchored on a literal ("://", "--", '=', ':'), not regular
// expressions: tool output can be a megabyte, and an unanchored
// case-insensitive regexp costs orders of magnitude more per byte. Each rule
// is also guarded by a cheap substring test so that ordinary text costs a
// few comparisons.

// optionNames are the normalised command-option and assignment names of
// the spec (access[-_]?token, api[-_]?key, ...); names ending in a sensitive
// suffix (github_token, db_password) count as well.
var optionNames = map[string]bool{
	"access_token": true, "accesstoken": true, "api_key": true, "apikey": true,
	"authorization": true, "proxy_authorization": true, "cookie": true, "credential": true, "password": true,
	"passwd": true, "private_key": true, "privatekey": true, "secret": true, "token": true,
}

func optionName(norm []byte) bool {
	if optionNames[string(norm)] { // no allocation for a map index
		return true
	}
	return hasSensitiveSuffix(norm)
}

// normalized is NormalizeField into buf, without allocating for names of
// up to len(buf) bytes: the scanners normalise a name at every '=' and ':'
// of the text, and keep it only when it is a credential name.
func normalized(buf *[64]byte, name string) []byte { return appendNormalized(buf[:0], name) }

func scanText(d *discoverer, s string) {
	// Each scanner is anchored on a literal; a text without it skips the
	// scanner after one fast search.
	if strings.Contains(s, "://") {
		scanURLs(d, s)
	}
	if strings.Contains(s, "--") {
		scanOptions(d, s)
	}
	if strings.Contains(s, "=") {
		scanAssignments(d, s)
	}
	if strings.Contains(s, ":") {
		scanAuthHeaders(d, s)
		scanSecretHeaders(d, s)
		if strings.Contains(s, `"`) {
			scanJSONFields(d, s)
		}
	}
	scanShapes(d, s)
}

// scanOptions finds --name=value and --name value (same line).
func scanOptions(d *discoverer, s string) {
	for from := 0; ; {
		i := strings.Index(s[from:], "--")
		if i < 0 {
			return
		}
		i += from
		from = i + 1
		j := i + 2
		if j >= len(s) || !isLetter(s[j]) {
			continue
		}
		for j < len(s) && (isLetter(s[j]) || isDigit(s[j]) || s[j] == '_' || s[j] == '-') {
			j++
		}
		name := s[i+2 : j]
		k := j
		if k < len(s) && s[k] == '=' {
			k++
		} else {
			for k < len(s) && (s[k] == ' ' || s[k] == '\t') {
				k++
			}
			if k == j {
				continue
			}
		}
		value, n := optionValue(s[k:])
		var buf [64]byte
		if value == "" || strings.HasPrefix(value, "--") || !optionName(normalized(&buf, name)) {
			continue
		}
		from = k + n
		d.add(value, "COMMAND_SECRET", d.src("command:", ""))
	}
}

// optionValue returns the value at the start of s, a same-line quoted
// string (without its quotes) or a run up to white space or a quote, and
// the number of bytes it spans.
func optionValue(s string) (string, int) {
	if s == "" {
		return "", 0
	}
	if q := s[0]; q == '"' || q == '\'' {
		line, _, _ := strings.Cut(s[1:], "\n")
		if v, _, closed := strings.Cut(line, s[:1]); closed {
			return v, len(v) + 2
		}
		return "", 0
	}
	end := 0
	for end < len(s) && !isSpace(s[end]) && s[end] != '"' && s[end] != '\'' {
		end++
	}
	return s[:end], end
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// scanAssignments finds name=value where name is a credential name. It is
// written by hand because every '=' must be examined, including those a
// regular expression would have consumed as part of an earlier value
// ("url=x?token=secret").
func scanAssignments(d *discoverer, s string) {
	for i := 0; i < len(s); i++ {
		if s[i] != '=' {
			continue
		}
		if i+1 < len(s) && s[i+1] == '=' { // ==, a comparison
			i++
			continue
		}
		j := i
		for j > 0 && (s[j-1] == ' ' || s[j-1] == '\t') {
			j--
		}
		end := j
		for j > 0 && isIdentByte(s[j-1]) {
			j--
		}
		if j == end {
			continue
		}
		var buf [64]byte
		nb := normalized(&buf, s[j:end])
		if !optionName(nb) {
			continue
		}
		norm := string(nb)
		k := i + 1
		for k < len(s) && (s[k] == ' ' || s[k] == '\t') {
			k++
		}
		value := assignedValue(s[k:])
		name, source := strings.ToUpper(norm), d.src("assignment:", "")
		if !isAuthField(norm) {
			d.add(value, name, source)
			continue
		}
		if k < len(s) && (s[k] == '"' || s[k] == '\'') {
			d.add(authCredential(value), name, source) // a quoted "Bearer xyz"
			continue
		}
		// Unquoted "authorization=Bearer xyz": the credential is the next
		// word. After an unknown first word both are recorded, as for
		// headers: it may be a scheme or the credential itself.
		next := assignedValue(strings.TrimLeft(s[k+len(value):], " \t"))
		if strings.Contains(strings.TrimRight(next, "="), "=") {
			next = "" // another assignment, not a credential
		}
		addAuth(d, value, next, name, source)
	}
}

// addAuth records the credential of "first [second]", the words after an
// Authorization name: the second after a known scheme; both after any
// other first word that may be a scheme (a word: it may also be the
// credential, so both are recorded rather than guessing); else the first.
func addAuth(d *discoverer, first, second, name string, src sourceParts) {
	if authSchemes[strings.ToLower(first)] {
		d.add(second, name, src)
		return
	}
	d.add(first, name, src)
	if isWord(first) {
		d.add(second, name, src)
	}
}

func isIdentByte(c byte) bool {
	return isLetter(c) || isDigit(c) || c == '_' || c == '-' || c == '.'
}

// assignedValue returns the value at the start of s: the contents of a
// quoted string, or everything up to white space, '&' or a delimiter.
func assignedValue(s string) string {
	if s == "" {
		return ""
	}
	if q := s[0]; q == '"' || q == '\'' {
		if v, _, closed := strings.Cut(s[1:], s[:1]); closed {
			return v
		}
		s = s[1:]
	}
	end := strings.IndexAny(s, " \t\r\n&\"'`,;<>)]}")
	if end < 0 {
		return s
	}
	return s[:end]
}

// indexFold is strings.Index ignoring ASCII case; sub must be lower case.
// It does not allocate.
func indexFold(s, sub string) int {
	n := len(sub)
	for i := 0; i+n <= len(s); i++ {
		if s[i]|0x20 != sub[0] {
			continue
		}
		j := 1
		for j < n && s[i+j]|0x20 == sub[j] {
			j++
		}
		if j == n {
			return i
		}
	}
	return -1
}
