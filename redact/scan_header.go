package redact

import (
	"strconv"
	"strings"
)

// authSchemes are words that start an Authorization value without being
// the credential.
var authSchemes = map[string]bool{
	"basic": true, "bearer": true, "digest": true, "token": true, "negotiate": true,
	"ntlm": true, "hoba": true, "mutual": true, "dpop": true, "oauth": true, "apikey": true,
	"api-key": true, "key": true, "bot": true, "jwt": true, "aws": true, "aws4-hmac-sha256": true,
	"sharedkey": true, "sharedaccesssignature": true, "googlelogin": true, "splunk": true,
}

// scanAuthHeaders finds "(Proxy-)Authorization: [scheme ]credential",
// also with the name quoted as in JSON text.
func scanAuthHeaders(d *discoverer, s string) {
	const name = "authorization"
	for from := 0; ; {
		i := indexFold(s[from:], name)
		if i < 0 {
			return
		}
		i += from
		from = i + len(name)
		if i > 0 && isWordByte(s[i-1]) {
			continue
		}
		k, ok := headerColon(s, from)
		if !ok {
			continue
		}
		if k < len(s) && (s[k] == '"' || s[k] == '\'') {
			k++
		}
		first := headerWord(s[k:])
		if first == "" {
			continue
		}
		k += len(first)
		j := k
		for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
			j++
		}
		// Without blanks s[j] is where the first word stopped, so there
		// is no second word.
		addAuth(d, first, headerWord(s[j:]), "AUTHORIZATION", d.src("header:", ""))
	}
}

// headerColon accepts an optional closing quote, blanks, ':' and blanks
// at s[k:], returning the offset after them.
func headerColon(s string, k int) (int, bool) {
	if k < len(s) && (s[k] == '"' || s[k] == '\'') {
		k++
	}
	for k < len(s) && (s[k] == ' ' || s[k] == '\t') {
		k++
	}
	if k >= len(s) || s[k] != ':' {
		return 0, false
	}
	k++
	for k < len(s) && (s[k] == ' ' || s[k] == '\t') {
		k++
	}
	return k, true
}

// headerWord returns the run at the start of s up to white space, a quote,
// ',' or ';'.
func headerWord(s string) string {
	end := 0
	for end < len(s) && !isSpace(s[end]) && s[end] != '"' && s[end] != '\'' && s[end] != ',' && s[end] != ';' {
		end++
	}
	return s[:end]
}

// secretHeaders are header names whose value is a credential.
var secretHeaders = []string{"x-api-key", "x-goog-api-key", "api-key", "apikey", "x-api-token", "x-auth-token", "x-access-token"}

func isSecretHeader(name string) bool {
	for _, h := range secretHeaders {
		if strings.EqualFold(name, h) {
			return true
		}
	}
	return false
}

// scanSecretHeaders finds "x-api-key: value" and the other secretHeaders,
// also with the name quoted as in JSON text.
func scanSecretHeaders(d *discoverer, s string) {
	for i := 0; i < len(s); i++ {
		if s[i] != ':' {
			continue
		}
		j := i
		for j > 0 && (s[j-1] == ' ' || s[j-1] == '\t') {
			j--
		}
		if j > 0 && (s[j-1] == '"' || s[j-1] == '\'') {
			j--
		}
		end := j
		for j > 0 && (isWordByte(s[j-1]) || s[j-1] == '-') {
			j--
		}
		if !isSecretHeader(s[j:end]) {
			continue
		}
		k := i + 1
		for k < len(s) && (s[k] == ' ' || s[k] == '\t') {
			k++
		}
		var value string
		if k < len(s) && (s[k] == '"' || s[k] == '\'') {
			value, _ = optionValue(s[k:])
		} else {
			value = headerWord(s[k:])
		}
		d.add(value, "SECRET_HEADER", d.src("header:", ""))
	}
}

// scanJSONFields finds "field": "value" pairs with a sensitive field name
// inside text that carries JSON (a tool's content, a response body).
func scanJSONFields(d *discoverer, s string) {
	for i := 0; i < len(s); i++ {
		if s[i] != ':' {
			continue
		}
		j := i
		for j > 0 && (s[j-1] == ' ' || s[j-1] == '\t') {
			j--
		}
		if j == 0 || s[j-1] != '"' {
			continue
		}
		end := j - 1
		start := end
		for start > 0 && end-start < 64 && isJSONKeyByte(s[start-1]) {
			start--
		}
		if start == end || start == 0 || s[start-1] != '"' {
			continue
		}
		var buf [64]byte
		nb := normalized(&buf, s[start:end])
		if !sensitiveBytes(nb) {
			continue
		}
		norm := string(nb)
		k := i + 1
		for k < len(s) && (s[k] == ' ' || s[k] == '\t') {
			k++
		}
		raw, ok := jsonStringBody(s[k:])
		if !ok {
			continue
		}
		if isAuthField(norm) {
			raw = authCredential(raw)
		}
		name, source := strings.ToUpper(norm), d.src("json:", "")
		if dec, err := strconv.Unquote(`"` + raw + `"`); err == nil {
			d.add(dec, name, source) // the same as raw without escapes: recorded once
		}
		d.add(raw, name, source)
	}
}

func isJSONKeyByte(c byte) bool {
	return isWordByte(c) || c == '.' || c == ' ' || c == '-'
}

// jsonStringBody returns the still-escaped contents of the JSON string
// literal at the start of s, which must close on the same line.
func jsonStringBody(s string) (string, bool) {
	if s == "" || s[0] != '"' {
		return "", false
	}
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '\n':
			return "", false
		case '"':
			return s[1:i], true // "" is no secret: too short to record
		}
	}
	return "", false
}
