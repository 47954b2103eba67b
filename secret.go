package demiurge

import (
	"encoding/json"
	"fmt"
	"log/slog"
)

// Secret holds a credential. It never prints, logs or marshals its value;
// Reveal is the one way to read it, used only where the value leaves the Host
// for its owner (an HTTP header to the provider, a bound environment variable).
type Secret struct{ value string }

// NewSecret wraps v.
func NewSecret(v string) Secret { return Secret{value: v} }

// Reveal returns the raw value.
func (s Secret) Reveal() string { return s.value }

// IsZero reports whether the secret is empty.
func (s Secret) IsZero() bool { return s.value == "" }

const redactedSecret = "<redacted>"

func (s Secret) String() string               { return redactedSecret }
func (s Secret) GoString() string             { return redactedSecret }
func (s Secret) Format(f fmt.State, _ rune)   { _, _ = f.Write([]byte(redactedSecret)) }
func (s Secret) MarshalJSON() ([]byte, error) { return json.Marshal(redactedSecret) }
func (s Secret) MarshalText() ([]byte, error) { return []byte(redactedSecret), nil }
func (s Secret) LogValue() slog.Value         { return slog.StringValue(redactedSecret) }
