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
	return redact.Replacements(s.Redactor().Secrets())
}
