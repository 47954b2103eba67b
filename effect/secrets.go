package effect

import (
	"sync"

	"github.com/demiurge/demiurge/redact"
)

// Secrets is the turn-wide set of known secrets: provider keys and bound
// secrets given by the Host, plus every secret discovered in a tool call's
// arguments or result during the turn. Each view of every later result is
// redacted with all of them. It is safe for concurrent use; the zero value
// is empty, and a nil *Secrets knows nothing.
type Secrets struct {
	mu  sync.Mutex // guards red
	red *redact.Redactor
}

// NewSecrets returns a set holding the given secrets.
func NewSecrets(known ...redact.Secret) *Secrets {
	return &Secrets{red: redact.New(known...)}
}

// Add records more secrets and returns the redactor that knows all of them.
func (s *Secrets) Add(more ...redact.Secret) *redact.Redactor {
	if s == nil {
		return redact.New(more...)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(more) > 0 || s.red == nil {
		s.red = s.red.With(more...)
	}
	return s.red
}

// Redactor returns the redactor that knows every secret recorded so far.
func (s *Secrets) Redactor() *redact.Redactor { return s.Add() }

// Replacements maps each known secret value to its marker, for exact-value
// replacement in streams (command output, artifacts, streamed model text).
func (s *Secrets) Replacements() map[string]string {
	return MarkerReplacements(s.Redactor().Secrets())
}

// MarkerReplacements maps each secret's value to its marker (values that
// are empty are left out), the form exact-value replacers take.
func MarkerReplacements(secrets []redact.Secret) map[string]string {
	out := make(map[string]string, len(secrets))
	for _, sec := range secrets {
		if sec.Value != "" {
			out[sec.Value] = redact.Marker(sec.Name)
		}
	}
	return out
}
