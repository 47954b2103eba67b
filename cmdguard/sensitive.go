package cmdguard

import "strings"

// The sensitive names of the tool-runtime spec, lowercased. The file tools
// decide with SensitivePath and SensitiveDir too, so a path they refuse is
// never readable through the terminal without the operator seeing it.
var (
	sensitiveDirs       = map[string]bool{".git": true, ".venv": true, ".demiurge": true, ".ssh": true, ".aws": true, ".kube": true}
	credentialFiles     = map[string]bool{".netrc": true, ".npmrc": true, ".pgpass": true, ".pypirc": true, ".git-credentials": true}
	privateKeyFiles     = map[string]bool{"id_rsa": true, "id_dsa": true, "id_ecdsa": true, "id_ed25519": true}
	writeSensitiveFiles = map[string]bool{"pyproject.toml": true, "uv.lock": true}
)

// SensitivePath reports whether the slash path p names a sensitive file,
// exactly as the file tools decide it: any component
// is a credential or VCS directory (.git .venv .demiurge .ssh .aws .kube) or
// starts with ".env"; or the last component is a credential file (.netrc
// .npmrc .pgpass .pypirc .git-credentials), a private key (id_rsa id_dsa id_ecdsa
// id_ed25519, *.pem, *.key, any name containing both "private" and "key");
// and, when write is set, a package manifest the Host must not rewrite
// (pyproject.toml, uv.lock). Matching is case-insensitive. "" and "." are
// not sensitive.
func SensitivePath(p string, write bool) bool {
	if p == "" || p == "." {
		return false
	}
	parts := strings.Split(strings.ToLower(p), "/")
	for _, c := range parts {
		if SensitiveDir(c) {
			return true
		}
	}
	name := parts[len(parts)-1]
	switch {
	case credentialFiles[name], privateKeyFiles[name]:
		return true
	case strings.HasSuffix(name, ".pem"), strings.HasSuffix(name, ".key"):
		return true
	case strings.Contains(name, "private") && strings.Contains(name, "key"):
		return true
	}
	return write && writeSensitiveFiles[name]
}

// SensitiveDir reports whether everything below a directory called name
// is sensitive: a credential or VCS directory, or a name starting with
// ".env" (case-insensitive).
func SensitiveDir(name string) bool {
	name = strings.ToLower(name)
	return sensitiveDirs[name] || strings.HasPrefix(name, ".env")
}

// guardSensitive is SensitivePath plus the one name the review adds for the
// terminal: config.yaml, the Host's configuration file, in any component.
func guardSensitive(p string, write bool) bool {
	if SensitivePath(p, write) {
		return true
	}
	for _, c := range strings.Split(strings.ToLower(p), "/") {
		if c == "config.yaml" {
			return true
		}
	}
	return false
}

// sensitiveWord reports whether a command word names a sensitive path:
// the word itself, the value of --opt=value, the value glued to a short
// option (-X.netrc), or any ':'-separated piece of it, which is how git
// names a file inside a revision ("HEAD:.env", ":0:id_rsa").
func sensitiveWord(w string, write bool) bool {
	for _, cand := range pathCandidates(w) {
		for _, piece := range strings.Split(cand, ":") {
			if guardSensitive(piece, write) {
				return true
			}
		}
	}
	return false
}

// pathCandidates returns the parts of a word that may be a path: the word
// itself; for an option, the value after '=' (--file=x); for a short
// option, the text glued after its letter (-f/etc/passwd, -X.netrc) and,
// since short options cluster, the rest of the word from its first '/',
// '~' or '.' (-nf/etc/passwd). A glued value only counts when it is at
// least two bytes long: "-la" and "-n5" are not files, and neither is the
// lone delimiter of "cut -d/" or "sort -t.".
func pathCandidates(w string) []string {
	if !strings.HasPrefix(w, "-") {
		return []string{w}
	}
	if _, v, ok := strings.Cut(w, "="); ok {
		return []string{v}
	}
	if strings.HasPrefix(w, "--") {
		return nil
	}
	var out []string
	if v := w[min(2, len(w)):]; len(v) >= 2 {
		out = append(out, v)
	}
	if k := strings.IndexAny(w[1:], "/~."); k >= 0 {
		if v := w[1+k:]; len(v) >= 2 {
			out = append(out, v)
		}
	}
	return out
}

// outsideReason explains why a path candidate may name something outside
// the workspace: it is absolute, home-relative, or has a ".." component.
func outsideReason(p string) string {
	if strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~") {
		return "absolute or home-relative paths are not auto-approved in terminal commands"
	}
	for _, c := range strings.Split(p, "/") {
		if c == ".." {
			return "parent-directory paths are not auto-approved in terminal commands"
		}
	}
	return ""
}
