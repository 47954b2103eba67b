package redact

import (
	"strings"
	"testing"
)

// found renders secrets as "NAME=value@source" for readable comparisons.
func found(secrets []Secret) map[string]bool {
	m := make(map[string]bool, len(secrets))
	for _, s := range secrets {
		m[s.Name+"="+s.Value+"@"+s.Source] = true
	}
	return m
}

func TestDiscover(t *testing.T) {
	runDiscoverRows(t, []discoverRow{
		{
			name:  "sensitive field",
			in:    map[string]any{"args": map[string]any{"api_key": "sk-abcdef123456", "path": "/tmp/file"}},
			want:  []string{"API_KEY=sk-abcdef123456@field:args.api_key"},
			never: []string{"/tmp/file"},
		},
		{
			name: "sensitive field name is normalised",
			in:   map[string]any{"X-Api-Key": "key-0123456789"},
			want: []string{"X_API_KEY=key-0123456789@field:X-Api-Key"},
		},
		{
			name: "suffix field in a list",
			in:   map[string]any{"items": []any{map[string]any{"github_token": "ghp_0123456789"}}},
			want: []string{"GITHUB_TOKEN=ghp_0123456789@field:items.0.github_token"},
		},
		{
			name:  "authorization field keeps only the credential",
			in:    map[string]any{"headers": map[string]any{"Authorization": "Bearer tok-0123456789"}},
			want:  []string{"AUTHORIZATION=tok-0123456789@field:headers.Authorization"},
			never: []string{"Bearer tok-0123456789", "Bearer"},
		},
		{
			name: "authorization field without scheme",
			in:   map[string]any{"proxy_authorization": "rawcredential99"},
			want: []string{"PROXY_AUTHORIZATION=rawcredential99@field:proxy_authorization"},
		},
		{
			name: "container under a sensitive key: nested strings and keys",
			in: map[string]any{"credential": map[string]any{
				"userkey-abcdef": "value-123456",
				"list":           []any{"nested-secret-1", 42},
			}},
			want: []string{
				"CREDENTIAL=userkey-abcdef@field:credential",
				"CREDENTIAL=value-123456@field:credential",
				"CREDENTIAL=nested-secret-1@field:credential",
				"CREDENTIAL=list@field:credential",
			},
		},
		{
			name: "URL password, raw and decoded",
			in:   "clone https://alice:p%40ssw0rd@example.com/repo.git now",
			want: []string{
				"URL_PASSWORD=p%40ssw0rd@url:value.password",
				"URL_PASSWORD=p@ssw0rd@url:value.password",
			},
			never: []string{"alice"},
		},
		{
			name: "URL long user name",
			in:   map[string]any{"remote": "https://ghp_abcdefgh1234@github.com/x/y"},
			want: []string{"URL_USERINFO=ghp_abcdefgh1234@url:remote.username"},
		},
		{
			name:  "URL short user name is not a secret",
			in:    "ftp://bob@example.com/file",
			never: []string{"bob"},
		},
		{
			name: "URL query parameters, percent-decoded",
			in:   "see wss://h.example/cb?code=ab%2Fcd%2Bef&page=2&X-Amz-Signature=f00dfeed&jwt=eyJhbGciOi",
			want: []string{
				"CODE=ab/cd+ef@url:value.query.code",
				"CODE=ab%2Fcd%2Bef@url:value.query.code",
				"X_AMZ_SIGNATURE=f00dfeed@url:value.query.x_amz_signature",
				"JWT=eyJhbGciOi@url:value.query.jwt",
			},
			never: []string{"2"},
		},
		{
			name: "URL query with sensitive field name and fragment token",
			in:   "http://h/x?access_token=at-12345678#id_token=idt-12345678",
			want: []string{
				"ACCESS_TOKEN=at-12345678@url:value.query.access_token",
				"ID_TOKEN=idt-12345678@url:value.fragment.id_token",
			},
		},
		{
			name: "URL trailing punctuation",
			in:   "open https://h/x?key=keyvalue99.",
			want: []string{"KEY=keyvalue99@url:value.query.key"},
		},
		{
			name: "command options",
			in:   `tool --token=tok-aaaa1111 --api-key "key bbbb2222" --github-token ghp_cccc3333 --verbose yes`,
			want: []string{
				"COMMAND_SECRET=tok-aaaa1111@command:value",
				"COMMAND_SECRET=key bbbb2222@command:value",
				"COMMAND_SECRET=ghp_cccc3333@command:value",
			},
			never: []string{"yes"},
		},
		{
			name:  "command option name must end at = or space",
			in:    "tool --token-file /etc/tokenfile",
			never: []string{"/etc/tokenfile"},
		},
		{
			name: "assignments",
			in:   "PASSWORD=hunter22 GITHUB_TOKEN = 'ghp x1' db.password=\"pw with space\" url=x?token=abc%2Fdef&y=1",
			want: []string{
				"PASSWORD=hunter22@assignment:value",
				"GITHUB_TOKEN=ghp x1@assignment:value",
				"DB_PASSWORD=pw with space@assignment:value",
				"TOKEN=abc%2Fdef@assignment:value",
			},
		},
		{
			name:  "assignment comparisons and ordinary names are not secrets",
			in:    "if token == expected: name=value1234 mytoken=notsecret1",
			never: []string{"expected:", "value1234", "notsecret1", "= expected:"},
		},
		{
			name: "authorization assignment skips the scheme",
			in:   "authorization=Bearer zzzz9999",
			want: []string{"AUTHORIZATION=zzzz9999@assignment:value"},
		},
		{
			name: "authorization header",
			in:   "GET / HTTP/1.1\r\nAuthorization: Bearer eyJ0eXAiOiJKV1Q\r\nProxy-Authorization: Basic dXNlcjpwYXNz\r\n",
			want: []string{
				"AUTHORIZATION=eyJ0eXAiOiJKV1Q@header:value",
				"AUTHORIZATION=dXNlcjpwYXNz@header:value",
			},
			never: []string{"Bearer", "Basic"},
		},
		{
			name: "authorization header without scheme",
			in:   "authorization: sk-live-123456",
			want: []string{"AUTHORIZATION=sk-live-123456@header:value"},
		},
		{
			name: "secret headers",
			in:   "x-api-key: k-11112222\nX-Goog-Api-Key: g-33334444\n\"x-auth-token\": \"t-55556666\"",
			want: []string{
				"SECRET_HEADER=k-11112222@header:value",
				"SECRET_HEADER=g-33334444@header:value",
				"SECRET_HEADER=t-55556666@header:value",
			},
		},
		{
			name: "quoted JSON field inside text",
			in:   map[string]any{"content": `{"user":"ann","client_secret":"cs-\u00e9-12345","password":"a\"b12345"}`},
			want: []string{
				"CLIENT_SECRET=cs-\\u00e9-12345@json:content",
				"CLIENT_SECRET=cs-é-12345@json:content",
				`PASSWORD=a\"b12345@json:content`,
				`PASSWORD=a"b12345@json:content`,
			},
			never: []string{"ann"},
		},
		{
			name: "mapping keys are scanned",
			in:   map[string]any{"https://u:keypass99@h/": 1},
			want: []string{"URL_PASSWORD=keypass99@url:https://u:<redacted:URL_PASSWORD>@h/.password"},
		},
		{
			name:  "markers are skipped",
			in:    map[string]any{"x": map[string]any{"redacted": true, "name": "TOKEN", "source": "token=abcdefgh"}},
			never: []string{"abcdefgh"},
		},
		{
			name: "a marker look-alike with extra keys is walked",
			in:   map[string]any{"redacted": true, "name": "n", "source": "s", "token": "tttt1234"},
			want: []string{"TOKEN=tttt1234@field:token"},
		},
		{
			name:  "short values are ignored",
			in:    map[string]any{"password": "abc", "text": "token=xyz --password  ab"},
			never: []string{"abc", "xyz", "ab"},
		},
		{
			name: "non-JSON Go values",
			in: map[string]any{
				"typed":  map[string]string{"secret": "typed-secret-1"},
				"ptr":    &struct{ S string }{"token=ptr-secret-1"},
				"bytes":  []byte("password=bytes-secret"),
				"values": [2]string{"x", "api_key=arr-secret-1"},
			},
			want: []string{
				"SECRET=typed-secret-1@field:typed.secret",
				"TOKEN=ptr-secret-1@assignment:ptr",
				"PASSWORD=bytes-secret@assignment:bytes",
				"API_KEY=arr-secret-1@assignment:values.1",
			},
		},
	})
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestDiscoverBounds(t *testing.T) {
	// A secret nested deeper than the discovery depth is not walked.
	deep := any(map[string]any{"token": "deep-secret-1"})
	for range DiscoverMaxDepth - 1 {
		deep = map[string]any{"n": deep}
	}
	if len(Discover(deep)) != 1 {
		t.Fatalf("secret at level %d not found", DiscoverMaxDepth)
	}
	if got := Discover(map[string]any{"n": deep}); len(got) != 0 {
		t.Fatalf("secret beyond depth %d found: %v", DiscoverMaxDepth, got)
	}

	// Only the first DiscoverMaxItems list items are walked.
	list := make([]any, DiscoverMaxItems+1)
	for i := range list {
		list[i] = "x"
	}
	list[DiscoverMaxItems-1] = "token=inside-limit"
	list[DiscoverMaxItems] = "token=beyond-limit"
	set := map[string]bool{}
	for _, s := range Discover(list) {
		set[s.Value] = true
	}
	if !set["inside-limit"] || set["beyond-limit"] {
		t.Fatalf("item bound: got %v", set)
	}
}

func TestDiscoverSourcesNeverHoldValues(t *testing.T) {
	in := map[string]any{"token=keyname-secret": map[string]any{"password": "pw-0123456"}}
	for _, s := range Discover(in) {
		if strings.Contains(s.Source, "keyname-secret") {
			t.Errorf("source %q contains a secret", s.Source)
		}
	}
}

func TestSecretDoesNotPrintValue(t *testing.T) {
	s := Secret{Value: "very-secret-value", Name: "TOKEN", Source: "env:TOKEN"}
	if s.Fingerprint() != "46439e9b76dd3708" {
		t.Fatalf("fingerprint %q", s.Fingerprint())
	}
	for _, out := range []string{s.String(), s.GoString(), s.LogValue().String()} {
		if strings.Contains(out, s.Value) {
			t.Errorf("%q leaks the value", out)
		}
	}
}
