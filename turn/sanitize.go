package turn

import (
	"strings"

	"github.com/demiurge/demiurge"
)

const maxErrorChars = 500

// sanitizeError renders err for persistence and for the caller: the coded
// message (never an uncoded error's text, which may carry anything), known
// secret values replaced, newlines collapsed, at most 500 characters.
func sanitizeError(err error, secrets []string) *demiurge.Error {
	code := demiurge.ErrorCode(err)
	msg := demiurge.ErrorMessage(err)
	if code == demiurge.EINTERNAL {
		// Internal errors carry Go error text; keep it for the operator, but scrubbed.
		msg = err.Error()
	}
	return &demiurge.Error{Code: code, Message: scrub(msg, secrets)}
}

func scrub(msg string, secrets []string) string {
	for _, s := range secrets {
		if len(s) >= 4 {
			msg = strings.ReplaceAll(msg, s, "<redacted:API_KEY>")
		}
	}
	msg = strings.Join(strings.Fields(msg), " ")
	if r := []rune(msg); len(r) > maxErrorChars {
		msg = string(r[:maxErrorChars]) + "... [truncated]"
	}
	return msg
}
