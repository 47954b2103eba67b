package cmdguard

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sort"
	"unicode/utf8"
)

// fingerprintedKeys are the rule keys whose approval is bound to the exact
// command in the spec, plus filename-expansion and environment-overlay (a glob or
// an inline LD_PRELOAD=... can stand for anything) and the path keys
// (sensitive-path, path-outside-workspace: the operator approved that path,
// not every path), so one approval never covers the next command that
// happens to share the key. The other keys are coarse: one session approval
// covers every single-segment command with that key (see GrantCoverage).
var fingerprintedKeys = map[string]bool{
	"command-substitution":   true,
	"complex-shell":          true,
	"pipeline":               true,
	"process-substitution":   true,
	"script-eval":            true,
	"shell-eval":             true,
	"shell-expansion":        true,
	"shell-redirection":      true,
	"unknown-command":        true,
	"filename-expansion":     true,
	"environment-overlay":    true,
	"sensitive-path":         true,
	"path-outside-workspace": true,
}

// Execution is what identifies one terminal call besides its command text:
// the workspace-relative cwd, the explicit environment overlay and
// the execution options.
type Execution struct {
	Cwd            string            // workspace-relative, as shown in audits
	Env            map[string]string // explicit overlay
	Background     bool
	TimeoutSeconds int
	SecretBindings []BindingAudit
}

// BindingAudit is the audit form of one secret binding: never its value.
// The fields are in the order of their JSON keys, so the fingerprint's
// JSON has its keys sorted at every level, as the spec's fingerprint has it.
type BindingAudit struct {
	Capability string `json:"capability"`
	ExpiresAt  string `json:"expires_at"`
	Source     string `json:"source"`
	Target     string `json:"target"`
}

// Fingerprint returns the first 16 hex digits of
// sha256(JSON{command, cwd, env: sorted [k, v] pairs, execution_options:
// {background, secret_bindings, timeout_seconds}}), keys sorted, no
// insignificant space.
func Fingerprint(command string, x Execution) string {
	env := make([][2]string, 0, len(x.Env))
	for k, v := range x.Env {
		env = append(env, [2]string{k, v})
	}
	sort.Slice(env, func(i, j int) bool { return env[i][0] < env[j][0] })
	bindings := x.SecretBindings
	if bindings == nil {
		bindings = []BindingAudit{}
	}
	doc := struct {
		Command string      `json:"command"`
		Cwd     string      `json:"cwd"`
		Env     [][2]string `json:"env"`
		Options struct {
			Background     bool           `json:"background"`
			SecretBindings []BindingAudit `json:"secret_bindings"`
			TimeoutSeconds int            `json:"timeout_seconds"`
		} `json:"execution_options"`
	}{Command: exactString(command), Cwd: exactString(x.Cwd), Env: env}
	doc.Options.Background = x.Background
	doc.Options.SecretBindings = bindings
	doc.Options.TimeoutSeconds = x.TimeoutSeconds
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		// Strings, ints and bools always encode; keep the key unique to
		// the command all the same.
		buf.Reset()
		buf.WriteString(command)
	}
	sum := sha256.Sum256(bytes.TrimRight(buf.Bytes(), "\n"))
	return hex.EncodeToString(sum[:])[:16]
}

// exactString keeps invalid UTF-8 distinguishable: encoding/json would turn
// every invalid byte into U+FFFD, making different commands collide. NUL
// cannot occur in a command the shell runs, so the marked form cannot be
// mistaken for one.
func exactString(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return "\x00invalid-utf8:" + hex.EncodeToString([]byte(s))
}

// CacheKey returns the approval rule key of a reviewed command when only
// the command text is known: "terminal:terminal.exec:<rule_key>", with
// ":<fingerprint>" appended when the verdict is Exact. Prefer CacheKeyFor
// when the cwd, overlay and options are known, so that an approval never
// outlives them.
func CacheKey(v Verdict, command string) string {
	return CacheKeyFor(v, command, Execution{})
}

// CacheKeyFor returns the approval rule key for a reviewed command
// run with x. The fingerprint is appended when the verdict is Exact (or its
// rule key is one of the fingerprinted keys) and whenever x carries an
// environment overlay or secret bindings.
func CacheKeyFor(v Verdict, command string, x Execution) string {
	key := "terminal:terminal.exec:" + v.RuleKey
	if v.Exact || fingerprintedKeys[v.RuleKey] || len(x.Env) > 0 || len(x.SecretBindings) > 0 {
		key += ":" + Fingerprint(command, x)
	}
	return key
}
