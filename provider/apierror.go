package provider

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/demiurge/demiurge"
)

// apiError is the error object both vendors send, in error bodies and in
// stream error events: {"type", "message", "code"?}.
type apiError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
	Code    any    `json:"code"`
}

// errorMessage picks the human part of an error response body: error.message
// (OpenAI and Anthropic shapes), a string "error", or a top-level "message";
// otherwise the body itself. The caller scrubs and shortens the result.
func errorMessage(raw []byte) string {
	var body struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(raw, &body) == nil {
		var obj apiError
		if json.Unmarshal(body.Error, &obj) == nil {
			if obj.Message != "" {
				return obj.Message
			}
			if obj.Type != "" {
				return obj.Type
			}
		}
		var str string
		if json.Unmarshal(body.Error, &str) == nil && str != "" {
			return str
		}
		if body.Message != "" {
			return body.Message
		}
	}
	return strings.TrimSpace(string(raw))
}

// streamError turns an error event that arrived inside a 2xx stream into a
// coded error. Overload and rate-limit events are marked retryable; post
// retries them only when nothing has been emitted yet (see the stream
// readers).
func streamError(name string, e apiError, emitted bool) error {
	kind := strings.ToLower(e.Type)
	if kind == "" {
		if s, ok := e.Code.(string); ok {
			kind = strings.ToLower(s)
		}
	}
	msg := cmp.Or(e.Message, e.Type, "unknown error")
	code, retry := demiurge.EUNAVAILABLE, false
	switch {
	case strings.Contains(kind, "auth") || strings.Contains(kind, "permission"):
		code = demiurge.EUNAUTHORIZED
	case strings.Contains(kind, "invalid") || strings.Contains(kind, "not_found") || strings.Contains(kind, "too_large"):
		code = demiurge.EINVALID
	case strings.Contains(kind, "rate_limit") || strings.Contains(kind, "overloaded") ||
		kind == "api_error" || kind == "server_error":
		retry = true
	}
	// Not shortened here: the client scrubs the key from the whole message
	// first and shortens after, so no cut-off key prefix can survive.
	err := &demiurge.Error{Code: code, Message: name + ": stream error: " + msg}
	if retry && !emitted {
		return &retryable{err: err}
	}
	return err
}

// contextLengthError reports whether an error body says the request did
// not fit the model's context window: OpenAI's code
// context_length_exceeded, or the wording of Anthropic's and compatible
// servers' messages ("prompt is too long", "maximum context length", ...).
func contextLengthError(raw []byte) bool {
	var body struct {
		Error apiError `json:"error"`
	}
	if json.Unmarshal(raw, &body) == nil {
		if code, _ := body.Error.Code.(string); code == "context_length_exceeded" {
			return true
		}
	}
	msg := strings.ToLower(errorMessage(raw))
	for _, s := range []string{"context_length_exceeded", "prompt is too long", "maximum context length", "context window", "context length", "too many tokens", "input is too long"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// StatusError is the cause of an error for an HTTP error response: the
// status the endpoint answered with. Callers find it with errors.As.
type StatusError struct{ Status int }

func (e *StatusError) Error() string { return fmt.Sprintf("HTTP %d", e.Status) }

// HTTPStatus returns the HTTP status of the error response behind err, or
// 0 when err is not one.
func HTTPStatus(err error) int {
	var se *StatusError
	if errors.As(err, &se) {
		return se.Status
	}
	return 0
}
