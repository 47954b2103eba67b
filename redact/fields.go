package redact

// sensitiveExact are the normalised field names whose values are secrets.
var sensitiveExact = map[string]bool{
	"access_token":        true,
	"api_key":             true,
	"apikey":              true,
	"auth":                true,
	"authorization":       true,
	"bearer":              true,
	"client_secret":       true,
	"cookie":              true,
	"credential":          true,
	"id_token":            true,
	"key_material":        true,
	"password":            true,
	"passwd":              true,
	"private_key":         true,
	"proxy_authorization": true,
	"refresh_token":       true,
	"secret":              true,
	"secret_input":        true,
	"secret_value":        true,
	"signature":           true,
	"token":               true,
	"x_access_token":      true,
	"x_api_key":           true,
	"x_api_token":         true,
	"x_auth_token":        true,
	"x_goog_api_key":      true,
}

// sensitiveSuffixes catch prefixed variants such as github_token or
// db_password without listing every service by name.
var sensitiveSuffixes = []string{
	"_access_token",
	"_access_key",
	"_api_key",
	"_auth_token",
	"_client_secret",
	"_credential",
	"_password",
	"_private_key",
	"_refresh_token",
	"_secret",
	"_secret_key",
	"_token",
}

// NormalizeField returns the canonical form of a field name used for the
// sensitivity check: ASCII-lowercased, every run of characters that are not
// ASCII letters or digits collapsed to one "_", leading and trailing "_"
// trimmed. "X-Api-Key" and "x_api.key" both become "x_api_key".
func NormalizeField(name string) string {
	return string(appendNormalized(make([]byte, 0, len(name)), name))
}

func appendNormalized(b []byte, name string) []byte {
	sep := false
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		} else if !isAlnum(c) {
			sep = true
			continue
		}
		if sep && len(b) > 0 {
			b = append(b, '_')
		}
		sep = false
		b = append(b, c)
	}
	return b
}

// SensitiveField reports whether a mapping key, header or attribute name
// names a credential: its normalised form is in the spec's exact list or
// ends with one of the listed suffixes. It does not allocate for names of
// up to 64 bytes; it runs for every mapping key of every redacted value.
func SensitiveField(name string) bool {
	var buf [64]byte
	return sensitiveBytes(appendNormalized(buf[:0], name))
}

func sensitiveNormalized(n string) bool { return sensitiveBytes([]byte(n)) }

func sensitiveBytes(n []byte) bool {
	if len(n) == 0 {
		return false
	}
	if sensitiveExact[string(n)] { // no allocation for a map index
		return true
	}
	return hasSensitiveSuffix(n)
}

// hasSensitiveSuffix reports whether the normalised name n ends with one
// of sensitiveSuffixes.
func hasSensitiveSuffix(n []byte) bool {
	for _, s := range sensitiveSuffixes {
		if len(n) >= len(s) && string(n[len(n)-len(s):]) == s {
			return true
		}
	}
	return false
}
