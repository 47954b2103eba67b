package redact

import (
	"net/url"
	"strings"
)

// urlParamNames are query parameters that carry credentials although their
// names are not sensitive field names.
var urlParamNames = map[string]bool{"code": true, "jwt": true, "key": true, "session": true, "x_amz_signature": true}

func scanURLs(d *discoverer, s string) {
	for from := 0; ; {
		i := strings.Index(s[from:], "://")
		if i < 0 {
			return
		}
		i += from
		from = i + 3
		start := i
		for start > 0 && isLetter(s[start-1]) {
			start--
		}
		if !urlSchemes[strings.ToLower(s[start:i])] || (start > 0 && isWordByte(s[start-1])) {
			continue
		}
		end := from
		for end < len(s) && !isURLStop(s[end]) {
			end++
		}
		from = end
		scanURL(d, strings.TrimRight(s[i+3:end], ".,;:!?)]}"))
	}
}

var urlSchemes = map[string]bool{"http": true, "https": true, "ws": true, "wss": true, "ftp": true}

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
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	authority := rest[:end]
	if at := strings.LastIndexByte(authority, '@'); at >= 0 {
		user, pass, _ := strings.Cut(authority[:at], ":")
		base := "url:" + d.path.String()
		switch {
		case pass != "":
			addDecoded(d, pass, "URL_PASSWORD", base+".password", url.PathUnescape)
		case len(user) >= 8:
			addDecoded(d, user, "URL_USERINFO", base+".username", url.PathUnescape)
		}
	}
	rest = rest[end:]
	query, fragment, _ := strings.Cut(rest, "#")
	if _, q, ok := strings.Cut(query, "?"); ok {
		scanParams(d, q, ".query.")
	}
	if fragment != "" {
		scanParams(d, fragment, ".fragment.")
	}
}

// scanParams records credential-bearing parameters of a query or fragment.
// The decoded value is the secret of §5.2; the raw form is recorded too,
// because that is the form the surrounding text contains.
func scanParams(d *discoverer, q, part string) {
	for _, kv := range strings.FieldsFunc(q, func(r rune) bool { return r == '&' || r == ';' }) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || v == "" {
			continue
		}
		if dk, err := url.QueryUnescape(k); err == nil {
			k = dk
		}
		norm := NormalizeField(k)
		if !sensitiveNormalized(norm) && !urlParamNames[norm] {
			continue
		}
		addDecoded(d, v, strings.ToUpper(norm), "url:"+d.path.String()+part+norm, url.QueryUnescape)
	}
}

func addDecoded(d *discoverer, raw, name, source string, unescape func(string) (string, error)) {
	if dec, err := unescape(raw); err == nil && dec != raw {
		d.add(dec, name, source)
	}
	d.add(raw, name, source)
}
