package demiurge

import (
	"errors"
	"fmt"
)

// Error codes. They map to CLI exit codes and API statuses only at the edge.
const (
	ECONFLICT     = "conflict"     // the state changed underneath (expected version, busy lease)
	EINTERNAL     = "internal"     // a bug or an infrastructure failure
	EINVALID      = "invalid"      // bad input from a caller
	ENOTFOUND     = "not_found"    // missing, or not visible to the caller: never distinguished
	ECONFIG       = "config"       // configuration or core-load error (the CLI exits 2)
	EUNAVAILABLE  = "unavailable"  // a dependency (provider, store) could not be reached
	ETIMEOUT      = "timeout"      // a deadline passed
	ECANCELED     = "cancelled"    // the caller cancelled
	EUNAUTHORIZED = "unauthorized" // denied by capability, approval or owner checks
	EUNSUPPORTED  = "unsupported"  // the platform or build cannot keep a guarantee
	ESCHEMA       = "schema"       // a database this build does not own or understand
	// ECONTEXTOVERFLOW: a model request cannot be made to fit the model's
	// context window, even with the minimal context (system, compaction
	// summary, newest user message); the message says by how much.
	ECONTEXTOVERFLOW = "context_overflow"
)

// Error is the coded domain error. Message is safe to show a user: it never
// carries a secret, because it is written from public facts only.
type Error struct {
	Code    string
	Message string
	Err     error // optional cause, for errors.Is/As; never shown
}

func (e *Error) Error() string {
	if e.Message == "" {
		return e.Code
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// WrapError returns an *Error with code and message that keeps err as its cause.
func WrapError(code string, err error, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Err: err}
}

// ErrorCode returns the code of the first *Error in err's chain, "" for nil,
// and EINTERNAL for an uncoded error.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the user-safe message of the first *Error in err's
// chain, or "internal error" for an uncoded error.
func ErrorMessage(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Error()
	}
	return "internal error"
}
