package mcp

import (
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/redact"
)

// refPattern is a ${NAME} reference in a declared env or header value.
var refPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`) })

// interpolate replaces every ${NAME} in s with getenv(NAME). A reference
// to a variable that is unset or empty fails with
// "missing environment variable: NAME" (the first one, in order).
func interpolate(s string, getenv func(string) string) (string, error) {
	var missing string
	out := refPattern().ReplaceAllStringFunc(s, func(ref string) string {
		name := ref[2 : len(ref)-1]
		v := getenv(name)
		if v == "" && missing == "" {
			missing = name
		}
		return v
	})
	if missing != "" {
		return "", demiurge.Errorf(demiurge.ECONFIG, "missing environment variable: %s", missing)
	}
	return out, nil
}

// resolvedSecrets are the interpolated env and header values of one
// connection: what the server is given, and the secrets every text that
// comes back from it (errors, stderr) is redacted with.
type resolvedSecrets struct {
	env     map[string]string
	headers map[string]string
	red     *redact.Redactor
}

// resolveValues interpolates d's env and headers from the Host environment.
// Nothing is constructed when a variable is missing.
func resolveValues(d Declaration, getenv func(string) string) (resolvedSecrets, error) {
	r := resolvedSecrets{env: map[string]string{}, headers: map[string]string{}}
	var secrets []redact.Secret
	for _, k := range slices.Sorted(maps.Keys(d.Env)) {
		v, err := interpolate(d.Env[k], getenv)
		if err != nil {
			return r, err
		}
		r.env[k] = v
		secrets = append(secrets, redact.Secret{Value: v, Name: "mcp.env:" + k, Source: "mcp.env:" + k})
	}
	for _, k := range slices.Sorted(maps.Keys(d.Headers)) {
		v, err := interpolate(d.Headers[k], getenv)
		if err != nil {
			return r, err
		}
		r.headers[k] = v
		secrets = append(secrets, redact.Secret{Value: v, Name: "mcp.header:" + k, Source: "mcp.header:" + k})
		// "Bearer <token>": the credential alone can show up in an error too.
		if f := strings.Fields(v); len(f) > 1 {
			last := f[len(f)-1]
			secrets = append(secrets, redact.Secret{Value: last, Name: "mcp.header:" + k + ".credential", Source: "mcp.header:" + k + ".credential"})
		}
	}
	r.red = redact.New(dropShort(secrets)...)
	return r, nil
}

// dropShort drops values too short to redact without wrecking ordinary
// text ("1", "true"): the same floor discovery uses.
func dropShort(in []redact.Secret) []redact.Secret {
	out := in[:0]
	for _, s := range in {
		if len(s.Value) >= redact.MinSecretLen {
			out = append(out, s)
		}
	}
	return out
}
