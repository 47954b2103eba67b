package redact

import "testing"

func TestNormalizeField(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"token", "token"},
		{"X-Api-Key", "x_api_key"},
		{"x_api.key", "x_api_key"},
		{"  Client Secret  ", "client_secret"},
		{"--api--key--", "api_key"},
		{"GITHUB_TOKEN", "github_token"},
		{"proxy-Authorization", "proxy_authorization"},
		{"a1.b2", "a1_b2"},
		{"ÄPI_KEY", "pi_key"},
		{"___", ""},
	}
	for _, tt := range tests {
		if got := NormalizeField(tt.in); got != tt.want {
			t.Errorf("NormalizeField(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSensitiveField(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		// exact list
		{"access_token", true}, {"api_key", true}, {"apikey", true}, {"auth", true},
		{"authorization", true}, {"bearer", true}, {"client_secret", true}, {"cookie", true},
		{"credential", true}, {"id_token", true}, {"key_material", true}, {"password", true},
		{"passwd", true}, {"private_key", true}, {"proxy_authorization", true},
		{"refresh_token", true}, {"secret", true}, {"secret_input", true}, {"secret_value", true},
		{"signature", true}, {"token", true}, {"x_access_token", true}, {"x_api_key", true},
		{"x_api_token", true}, {"x_auth_token", true}, {"x_goog_api_key", true},
		// normalisation
		{"Authorization", true}, {"X-Api-Key", true}, {"x-goog-api-key", true}, {"API Key", true},
		{"Proxy-Authorization", true}, {"Set.Cookie", false},
		// suffixes
		{"github_token", true}, {"aws_access_key", true}, {"openai_api_key", true},
		{"slack_auth_token", true}, {"google_client_secret", true}, {"db_credential", true},
		{"DB_PASSWORD", true}, {"ssh-private-key", true}, {"my_refresh_token", true},
		{"webhook_secret", true}, {"aws_secret_key", true}, {"github-access-token", true},
		// not sensitive
		{"", false}, {"name", false}, {"key", false}, {"tokens", false}, {"token_count", false},
		{"max_tokens", false}, {"secretary", false}, {"password_hint_x", false}, {"authority", false},
		{"credentials", false}, {"path", false}, {"session", false}, {"code", false},
		{"_token", true}, {"keys", false},
	}
	for _, tt := range tests {
		if got := SensitiveField(tt.name); got != tt.want {
			t.Errorf("SensitiveField(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestHasSensitiveSuffix(t *testing.T) {
	for _, s := range sensitiveSuffixes {
		if !hasSensitiveSuffix([]byte(s)) || !hasSensitiveSuffix([]byte("x"+s)) {
			t.Errorf("%q", s)
		}
		if hasSensitiveSuffix([]byte(s + "x")) {
			t.Errorf("%q matched too much", s)
		}
	}
	for _, n := range []string{"token", "oken", "secret", "password", "tokens", "_tokenx"} {
		if hasSensitiveSuffix([]byte(n)) {
			t.Errorf("%q matched", n)
		}
	}
	if hasSensitiveSuffix(nil) {
		t.Error("empty name")
	}
}
