package redact

import "testing"

func TestCredentialVariable(t *testing.T) {
	for _, tt := range []struct {
		name string
		want bool
	}{
		{"AWS_SECRET_ACCESS_KEY", true},
		{"GITHUB_TOKEN", true},
		{"PASSWORD", true},
		{"OPENAI_API_KEY", true},
		{"STRIPE_KEY", true},
		{"SSH_KEY", true},
		{"KEY", true},
		{"NPM_TOKEN_FILE", true},
		{"DB_PWD", true},
		{"GPG_PASSPHRASE", true},
		{"GOOGLE_CREDENTIALS", true},
		{"MY_SECRETS", true},
		{"client_secret", true},
		{"LOG_LEVEL", false},
		{"PATH", false},
		{"HOME", false},
		{"KEYBOARD_LAYOUT", false},
		{"TOKENIZERS_PARALLELISM", false},
		{"MONKEY", false},
		{"SECRETARY_NAME", false},
		{"PASS_THROUGH", false},
		{"", false},
	} {
		if got := CredentialVariable(tt.name); got != tt.want {
			t.Errorf("CredentialVariable(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}
