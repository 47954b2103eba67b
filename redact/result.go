package redact

import (
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/demiurge/demiurge"
)

// ToolResult is the model-facing result of one tool call, as the dispatcher
// hands it to redaction.
type ToolResult struct {
	Content     string         `json:"content"`
	Data        map[string]any `json:"data,omitempty"`
	IsError     bool           `json:"is_error"`
	Terminate   bool           `json:"terminate,omitempty"`
	ModelOutput string         `json:"model_output,omitempty"`
}

// RedactionFailed is the content and model output of the fixed result that
// replaces every view when redaction fails.
const RedactionFailed = "<redaction-failed>"

// Views holds one tool result redacted for each audience. Failed reports
// that redaction failed and every view is the fixed failed result.
type Views struct {
	Model, Operator, Event, Durable, Debug ToolResult
	Failed                                 bool
	// Discovered holds the secrets found in the result itself, so the
	// caller can redact every later value of the turn with them too.
	Discovered []Secret
}

// Get returns the result for view; an unknown view gets the model view.
func (v Views) Get(view View) ToolResult {
	switch view {
	case Operator:
		return v.Operator
	case Event:
		return v.Event
	case Durable:
		return v.Durable
	case Debug:
		return v.Debug
	}
	return v.Model
}

func (v *Views) set(view View, r ToolResult) {
	switch view {
	case Model:
		v.Model = r
	case Operator:
		v.Operator = r
	case Event:
		v.Event = r
	case Durable:
		v.Durable = r
	case Debug:
		v.Debug = r
	}
}

// Redact produces the five views of r. Secrets are discovered in the whole
// result (content, data and model output as one value) and added to red's,
// so a credential that appears once under a sensitive key in Data is also
// removed from Content. Data keeps its own depth budget; sources of field
// markers in it read "field:data.<path>".
//
// If anything fails (an error, or a panic, which is recovered), every view
// is FailedResult(r) and the error is returned; the raw output is never a
// fallback. Redact is safe for concurrent use.
func Redact(r ToolResult, red *Redactor) (views Views, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = demiurge.Errorf(demiurge.EINTERNAL, "redact: panic while redacting a tool result (%s)", panicText(p))
		}
		if err != nil {
			views = failedViews(r)
		}
	}()
	whole := map[string]any{"content": r.Content, "model_output": r.ModelOutput}
	if r.Data != nil {
		whole["data"] = r.Data
	}
	found := Discover(whole)
	red = red.With(found...)
	for _, view := range AllViews() {
		out, err := redactResult(r, red, view)
		if err != nil {
			return Views{}, err
		}
		views.set(view, out)
	}
	views.Discovered = found
	return views, nil
}

func redactResult(r ToolResult, red *Redactor, view View) (ToolResult, error) {
	out := ToolResult{IsError: r.IsError, Terminate: r.Terminate}
	out.Content = redactString(red, r.Content, view)
	out.ModelOutput = redactString(red, r.ModelOutput, view)
	if r.Data != nil {
		v, err := red.valueAt(r.Data, view, pathStack{{key: "data", index: -1}})
		if err != nil {
			return out, err
		}
		data, ok := v.(map[string]any)
		if !ok {
			return out, demiurge.Errorf(demiurge.EINTERNAL, "redact: %s view of data is %T, want a mapping", view, v)
		}
		out.Data = data
	}
	return out, nil
}

func redactString(red *Redactor, s string, view View) string {
	w := walker{r: red, view: view, lim: red.Limits(view)}
	return w.str(s)
}

// FailedResult is the fixed result that replaces a tool result whose
// redaction failed. It keeps only whether execution started, read from
// raw.Data["executionStarted"].
func FailedResult(raw ToolResult) ToolResult {
	started, _ := raw.Data["executionStarted"].(bool)
	return ToolResult{
		Content:     RedactionFailed,
		Data:        map[string]any{"executionStarted": started, "redactionFailed": true},
		IsError:     true,
		ModelOutput: RedactionFailed,
	}
}

func failedViews(raw ToolResult) Views {
	v := Views{Failed: true}
	for _, view := range AllViews() {
		v.set(view, FailedResult(raw)) // a fresh Data map per view
	}
	return v
}

// ErrorLimit is the longest error message, in characters, that Error keeps.
const ErrorLimit = 500

// Error renders err for view as "<TypeName>: <message>": the message with
// CR and LF turned into spaces, known secrets and secrets discovered in the
// message itself removed, and cut at ErrorLimit characters with
// "... [truncated]". TypeName is the Go type name of err without package
// or pointer ("PathError", "Error"). If err.Error panics the result is
// "<TypeName>: <redaction-failed>". A nil err renders as "".
func Error(err error, secrets *Redactor, view View) string {
	if err == nil {
		return ""
	}
	name := typeName(err)
	msg, ok := errorText(err)
	if !ok {
		return name + ": " + RedactionFailed
	}
	return name + ": " + redactMessage(msg, secrets, view)
}

func redactMessage(msg string, secrets *Redactor, view View) string {
	msg = strings.Map(func(r rune) rune {
		if r == '\r' || r == '\n' {
			return ' '
		}
		return r
	}, msg)
	msg = secrets.With(Discover(msg)...).String(msg, view)
	if utf8.RuneCountInString(msg) > ErrorLimit {
		runes := []rune(msg)
		msg = string(runes[:ErrorLimit]) + "... [truncated]"
	}
	return msg
}

func errorText(err error) (msg string, ok bool) {
	defer func() {
		if recover() != nil {
			msg, ok = "", false
		}
	}()
	return err.Error(), true
}

func typeName(err error) string {
	t := reflect.TypeOf(err)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Name() == "" {
		return "error"
	}
	return t.Name()
}

// RedactError returns an error whose message is err's message redacted for
// view (CR/LF flattened, bounded as in Error) and which unwraps to err, so
// errors.Is and errors.As still see the cause while every rendering of the
// error is clean. A nil err returns nil.
func RedactError(err error, secrets *Redactor, view View) error {
	if err == nil {
		return nil
	}
	msg, ok := errorText(err)
	if !ok {
		msg = RedactionFailed
	} else {
		msg = redactMessage(msg, secrets, view)
	}
	return &redactedError{msg: msg, err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
