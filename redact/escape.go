package redact

import "strings"

// beforeEscape returns a value found in text written for a shell or a
// string literal (printf 'password=s3cr3t\n', "token=abc\tdef") cut before
// its first backslash escape, and whether it had one. The value the
// command prints, or the literal holds, is the part before the escape; the
// discoverer records it beside the written form, so a later bare
// occurrence of either is replaced: more is replaced, nothing leaks.
func beforeEscape(value string) (string, bool) {
	for i := strings.IndexByte(value, '\\'); i >= 0 && i+1 < len(value); {
		switch value[i+1] {
		case 'n', 't', 'r', '\\', '"', '\'', '0', 'x', 'u', 'e', 'a', 'b', 'f', 'v':
			return value[:i], true
		}
		j := strings.IndexByte(value[i+1:], '\\')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return "", false
}
