package redact

import (
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
)

// Secret is one known secret value with the name its markers carry
// ("<redacted:NAME>") and where it was found or bound ("field:args.token",
// "url:args.url.query.key", "env:GITHUB_TOKEN", ...).
//
// Secret deliberately does not print its Value: String, GoString and
// LogValue show only the name, the source and the fingerprint, so that a
// Secret that reaches a log line or an error by accident does not leak.
type Secret struct {
	Value  string
	Name   string
	Source string
}

// Fingerprint is the first 16 hex digits of sha256(Value). It identifies a
// secret in the debug view without revealing it.
func (s Secret) Fingerprint() string {
	sum := sha256.Sum256([]byte(s.Value))
	return hex.EncodeToString(sum[:8])
}

func (s Secret) String() string {
	return "Secret{" + s.Name + " " + s.Source + " " + s.Fingerprint() + "}"
}

// GoString keeps %#v from printing the value.
func (s Secret) GoString() string { return s.String() }

// LogValue keeps slog from printing the value.
func (s Secret) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("name", s.Name),
		slog.String("source", s.Source),
		slog.String("fingerprint", s.Fingerprint()),
	)
}

// Marker is the inline marker of a named secret: "<redacted:NAME>".
func Marker(name string) string { return "<redacted:" + name + ">" }

const (
	modelMarker  = "<redacted>"
	truncatedKey = "<truncated>"
)

// Replacements maps each secret's value to its marker, the value → marker
// pairs Stream and ReplaceAll take (secrets without a value are skipped).
func Replacements(secrets []Secret) map[string]string {
	out := make(map[string]string, len(secrets))
	for _, s := range secrets {
		if s.Value != "" {
			out[s.Value] = Marker(s.Name)
		}
	}
	return out
}
