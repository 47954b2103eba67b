package redact

import (
	"net/url"
	"strings"
)

// urlParamNames are query parameters that carry credentials although their
// names are not sensitive field names.
var urlParamNames = map[string]bool{"code": true, "jwt": true, "key": true, "session": true, "x_amz_signature": true}

// scanURLs records the credentials of every URL in s. Whatever the scheme
// (or none: "://" alone starts an authority), userinfo is a credential:
// postgres://, redis://, amqp://, mongodb+srv:// and git+ssh:// URLs carry
// passwords as often as http:// ones, and a scheme list would always miss
// one.
func scanURLs(d *discoverer, s string) {
	runEnd := 0 // end of the last URL scanned whole
	for from := 0; ; {
		i := strings.Index(s[from:], "://")
		if i < 0 {
			return
		}
		i += from
		from = i + 3
		if i < runEnd {
			// A URL nested in the previous one ("?next=https://u:p@h/"):
			// its userinfo is its own, its parameters were the outer
			// URL's. Each authority ends at the next "://" at the latest,
			// so nesting costs no more than one pass.
			scanAuthority(d, s[from:runEnd])
			continue
		}
		runEnd = from
		for runEnd < len(s) && !isURLStop(s[runEnd]) {
			runEnd++
		}
		scanURL(d, strings.TrimRight(s[from:runEnd], ".,;:!?)]}"))
	}
}

func isURLStop(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '\v', '\f', '"', '\'', '<', '>', '`':
		return true
	}
	return false
}

func isWordByte(c byte) bool { return isLetter(c) || isDigit(c) || c == '_' }

// scanURL records the credentials of one URL, given without its scheme.
func scanURL(d *discoverer, rest string) {
	end := scanAuthority(d, rest)
	rest = rest[end:]
	query, fragment, _ := strings.Cut(rest, "#")
	if _, q, ok := strings.Cut(query, "?"); ok {
		scanParams(d, q, ".query.")
	}
	if fragment != "" {
		scanParams(d, fragment, ".fragment.")
	}
}

// scanAuthority records the userinfo of the URL rest (given without its
// scheme) and returns where its authority ends.
func scanAuthority(d *discoverer, rest string) int {
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	authority := rest[:end]
	// Without '@' the userinfo is empty: nothing to record.
	userinfo := authority[:max(strings.LastIndexByte(authority, '@'), 0)]
	user, pass, _ := strings.Cut(userinfo, ":")
	if pass != "" {
		addDecoded(d, pass, "URL_PASSWORD", d.src("url:", ".password"), url.PathUnescape)
	} else if len(user) >= 8 {
		addDecoded(d, user, "URL_USERINFO", d.src("url:", ".username"), url.PathUnescape)
	}
	return end
}

// scanParams records credential-bearing parameters of a query or fragment.
// The decoded value is the secret; the raw form is recorded too,
// because that is the form the surrounding text contains. '?' separates
// parameters too, so that those of a URL nested in a parameter value
// ("?next=https://h/cb?key=…") are found.
func scanParams(d *discoverer, q, part string) {
	for _, kv := range strings.FieldsFunc(q, func(r rune) bool { return r == '&' || r == ';' || r == '?' }) {
		k, v, _ := strings.Cut(kv, "=") // no value: nothing is recorded
		if dk, err := url.QueryUnescape(k); err == nil {
			k = dk
		}
		norm := NormalizeField(k)
		if !sensitiveNormalized(norm) && !urlParamNames[norm] {
			continue
		}
		src := d.src("url:", part)
		src.name = norm
		addDecoded(d, v, strings.ToUpper(norm), src, url.QueryUnescape)
	}
}

func addDecoded(d *discoverer, raw, name string, source sourceParts, unescape func(string) (string, error)) {
	if dec, err := unescape(raw); err == nil {
		d.add(dec, name, source) // the same as raw without escapes: recorded once
	}
	d.add(raw, name, source)
}
