package provider

import (
	"cmp"
	"net/http"
	"net/url"
	"strings"

	"github.com/demiurge/demiurge"
)

// Endpoint is what an HTTP provider needs to reach one model API.
type Endpoint struct {
	// Name is the profile id; it prefixes every error ("openai: HTTP 500: …").
	Name string
	// BaseURL is the API root, e.g. https://api.openai.com/v1 or
	// https://api.anthropic.com (see NewOpenAI and NewAnthropic for the path
	// each appends).
	BaseURL string
	// APIKey is sent in the vendor's auth header and nowhere else.
	APIKey demiurge.Secret
	// BearerAuth sends the key as "Authorization: Bearer" on an Anthropic
	// endpoint (an OAuth-style token) instead of x-api-key.
	BearerAuth bool
	// Headers are extra headers sent on every request (profile defaults).
	Headers map[string]string
	// ExtraBody, when set, returns fields merged into the top level of the
	// request body for a model (a vendor's extension such as "thinking").
	ExtraBody func(model string) map[string]any
	// OutputLimitField is the request field that carries the output limit
	// on an OpenAI-compatible endpoint ("": max_tokens; OpenAI's own API
	// wants max_completion_tokens for its reasoning models).
	OutputLimitField string
	// Options tune timeouts and retries.
	Options Options
}

// newClient validates e and builds the shared HTTP client. endpointPath
// turns the base URL's path (without trailing slash) into the request path;
// a query in the base URL is kept. auth sets the credential header.
func (e Endpoint) newClient(defaultName string, endpointPath func(base string) string, auth func(h http.Header, key string)) (*client, error) {
	name := cmp.Or(e.Name, defaultName)
	base, err := validBaseURL(name, e.BaseURL)
	if err != nil {
		return nil, err
	}
	u, _ := url.Parse(base) // validBaseURL parsed it already
	u.Path = endpointPath(strings.TrimRight(u.Path, "/"))
	u.RawPath = ""
	if e.APIKey.IsZero() {
		return nil, demiurge.Errorf(demiurge.ECONFIG, "provider %s: API key missing", name)
	}
	h := make(http.Header)
	for k, v := range e.Headers {
		h.Set(k, v)
	}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json")
	if h.Get("User-Agent") == "" {
		h.Set("User-Agent", "demiurge")
	}
	// Last, so that no profile header can replace the credential.
	auth(h, e.APIKey.Reveal())
	return &client{name: name, url: u.String(), key: e.APIKey, header: h, opts: e.Options.withDefaults()}, nil
}

// validBaseURL checks that base is an absolute http(s) URL and returns it
// without trailing slashes. The error never quotes the URL's password.
func validBaseURL(name, base string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(base))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", demiurge.Errorf(demiurge.ECONFIG, "provider %s: base URL %s", name, urlProblem(base))
	}
	return strings.TrimRight(strings.TrimSpace(base), "/"), nil
}
