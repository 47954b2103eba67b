package provider

import (
	"net/url"
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

const (
	redactedKey = "<redacted:API_KEY>"
	// maxExcerpt bounds the part of a response body quoted in an error.
	maxExcerpt = 200
	// maxMessage bounds a whole error message built from response data.
	maxMessage = 300
)

// keyShaped matches tokens that look like vendor API keys (sk-…, sk-ant-…),
// so that a server echoing some other full key does not leak it either.
var keyShaped = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\b(?:sk|pk|rk)-[A-Za-z0-9_\-]{16,}`) })

// scrub removes key (raw and URL-escaped) and key-shaped tokens from s. It
// runs on the final text, before any truncation, so no prefix of a key can
// survive a cut.
func scrub(s, key string) string {
	if key != "" {
		s = strings.ReplaceAll(s, key, redactedKey)
		for _, esc := range []string{url.QueryEscape(key), url.PathEscape(key)} {
			if esc != key {
				s = strings.ReplaceAll(s, esc, redactedKey)
			}
		}
	}
	return keyShaped().ReplaceAllString(s, "<redacted>")
}

// excerpt renders a response body as one short line: scrubbed, control
// characters and runs of white space collapsed to one space, at most limit
// characters.
func excerpt(body, key string, limit int) string {
	s := scrub(body, key)
	var b strings.Builder
	space := false
	for _, r := range s {
		if r == utf8.RuneError || unicode.IsSpace(r) || unicode.IsControl(r) {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	out := b.String()
	if utf8.RuneCountInString(out) > limit {
		r := []rune(out)
		out = string(r[:limit-1]) + "…"
	}
	return out
}
