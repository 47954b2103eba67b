package redact

// credentialSegments are the words that make a Host variable name look
// like a credential wherever they stand in it (AWS_SECRET_ACCESS_KEY,
// STRIPE_KEY, DB_PASS_FILE): environment names carry the kind of value in
// one underscore-separated word more often than in a suffix.
var credentialSegments = map[string]bool{
	"apikey": true, "credential": true, "credentials": true, "key": true, "keys": true,
	"passphrase": true, "passwd": true, "password": true, "passwords": true, "pwd": true,
	"secret": true, "secrets": true, "token": true, "tokens": true,
}

// CredentialVariable reports whether a Host environment variable name
// looks like it holds a credential: SensitiveField says so (GITHUB_TOKEN,
// PASSWORD, OPENAI_API_KEY), or one of its words, once normalised, is
// key, token, secret, password, passwd, pwd, passphrase, credential(s)
// or apikey (AWS_SECRET_ACCESS_KEY, SSH_KEY, NPM_TOKEN_FILE). It errs on
// the side of a credential: a misjudged name costs the operator an
// explicit grant, a missed one exports a secret unasked.
func CredentialVariable(name string) bool {
	if SensitiveField(name) {
		return true
	}
	var buf [64]byte
	n := appendNormalized(buf[:0], name)
	start := 0
	for i := 0; i <= len(n); i++ {
		if i == len(n) || n[i] == '_' {
			if credentialSegments[string(n[start:i])] {
				return true
			}
			start = i + 1
		}
	}
	return false
}
