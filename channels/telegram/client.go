package telegram

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/demiurge/demiurge"
)

// client speaks the Bot API: every method is POST <base>/bot<token>/<method>
// with a form-urlencoded body (JSON-valued parameters JSON-encoded), and
// every answer is {"ok", "result"} or {"ok": false, "error_code",
// "description", "parameters": {"retry_after"}}. Its errors never carry
// the request URL, which holds the token.
type client struct {
	base  string // without a trailing slash
	token string
	http  *http.Client
}

// APIError is a Bot API refusal: an ok:false answer (also in an HTTP
// error's body) or an HTTP error without one.
type APIError struct {
	Method      string
	Code        int // error_code, else the HTTP status
	Description string
	RetryAfter  time.Duration // parameters.retry_after of a 429
}

func (e *APIError) Error() string {
	return fmt.Sprintf("telegram %s failed (%d): %s", e.Method, e.Code, e.Description)
}

// transportError is a request that got no answer. Sent reports whether
// the request may have reached the server (a timeout after writing), so
// that a send is not repeated.
type transportError struct {
	Method string
	Sent   bool
	Err    error
}

func (e *transportError) Error() string {
	return fmt.Sprintf("telegram %s: %s", e.Method, transportReason(e.Err))
}
func (e *transportError) Unwrap() error { return e.Err }

// transportReason is a short, URL-free reason for a transport failure.
func transportReason(err error) string {
	var ne net.Error
	var op *net.OpError
	switch {
	case errors.Is(err, context.Canceled):
		return "cancelled"
	case errors.As(err, &ne) && ne.Timeout():
		return "timed out"
	case errors.As(err, &op):
		return op.Op + " failed: " + errnoText(op.Err)
	}
	return "the request failed"
}

func errnoText(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 {
		return s[i+2:]
	}
	return s
}

type apiAnswer struct {
	OK          bool            `json:"ok"`
	Result      json.RawMessage `json:"result"`
	ErrorCode   int             `json:"error_code"`
	Description string          `json:"description"`
	Parameters  struct {
		RetryAfter int `json:"retry_after"`
	} `json:"parameters"`
}

// call runs method with params and decodes its result into out (nil: the
// result is ignored). timeout bounds the request: max(param timeout + 5,
// 10) s for getUpdates, 30 s otherwise.
func (c *client) call(ctx context.Context, method string, params url.Values, out any) error {
	timeout := 30 * time.Second
	if t := params.Get("timeout"); t != "" {
		n, _ := strconv.Atoi(t)
		timeout = max(time.Duration(n+5)*time.Second, 10*time.Second)
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, c.base+"/bot"+c.token+"/"+method, strings.NewReader(params.Encode()))
	if err != nil {
		return demiurge.Errorf(demiurge.ECONFIG, "telegram api_base_url is not a usable URL")
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return c.roundTrip(req, method, out)
}

// roundTrip sends req (a call of method) and decodes the answer's result
// into out (nil: ignored).
func (c *client) roundTrip(req *http.Request, method string, out any) error {
	resp, err := c.http.Do(req)
	if err != nil {
		return c.transport(method, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return &transportError{Method: method, Sent: true, Err: err}
	}
	var ans apiAnswer
	if err := json.Unmarshal(body, &ans); err != nil {
		if resp.StatusCode >= 400 {
			return &APIError{Method: method, Code: resp.StatusCode, Description: http.StatusText(resp.StatusCode)}
		}
		return &APIError{Method: method, Code: resp.StatusCode, Description: "the answer is not JSON"}
	}
	if !ans.OK {
		code := ans.ErrorCode
		if code == 0 {
			code = resp.StatusCode
		}
		desc := ans.Description
		if desc == "" {
			desc = http.StatusText(resp.StatusCode)
		}
		return &APIError{Method: method, Code: code, Description: strings.ReplaceAll(desc, c.token, "[REDACTED]"),
			RetryAfter: time.Duration(ans.Parameters.RetryAfter) * time.Second}
	}
	if out != nil {
		if err := json.Unmarshal(ans.Result, out); err != nil {
			return &APIError{Method: method, Code: resp.StatusCode, Description: "the result does not decode: " + err.Error()}
		}
	}
	return nil
}

// transport is the error of a request of method that got no answer,
// without the request URL, which holds the token.
func (c *client) transport(method string, err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // the url.Error's text holds the token
	}
	var op *net.OpError
	sent := !(errors.As(err, &op) && op.Op == "dial")
	return &transportError{Method: method, Sent: sent, Err: err}
}

// coded turns a client error into a demiurge error for a route: a refusal
// that asks for a later attempt (429, 5xx) or a request that never left
// is EUNAVAILABLE; one that may have been delivered is not, so it is never
// sent twice.
func coded(err error) error {
	var api *APIError
	var tr *transportError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &api):
		if api.Code == http.StatusTooManyRequests || api.Code >= 500 {
			return demiurge.WrapError(demiurge.EUNAVAILABLE, err, "%s", api.Error())
		}
		return demiurge.WrapError(demiurge.EINVALID, err, "%s", api.Error())
	case errors.As(err, &tr):
		if !tr.Sent {
			return demiurge.WrapError(demiurge.EUNAVAILABLE, err, "%s", tr.Error())
		}
		return demiurge.WrapError(demiurge.EINTERNAL, err, "%s (it may have been delivered)", tr.Error())
	}
	return err
}

// Bot API types, the fields this channel reads.
type (
	update struct {
		UpdateID      int64          `json:"update_id"`
		Message       *message       `json:"message"`
		CallbackQuery *callbackQuery `json:"callback_query"`
	}
	message struct {
		MessageID      int64    `json:"message_id"`
		From           *user    `json:"from"`
		Chat           chat     `json:"chat"`
		Text           string   `json:"text"`
		Caption        string   `json:"caption"`
		ReplyToMessage *message `json:"reply_to_message"`
		// Media (media_in.go): the sizes of a photo, or one file.
		Photo    []fileRef `json:"photo"`
		Voice    *fileRef  `json:"voice"`
		Audio    *fileRef  `json:"audio"`
		Video    *fileRef  `json:"video"`
		Document *fileRef  `json:"document"`
	}
	// fileRef is a PhotoSize, Voice, Audio, Video or Document: the fields
	// this channel reads.
	fileRef struct {
		FileID       string `json:"file_id"`
		FileUniqueID string `json:"file_unique_id"`
		FileSize     int64  `json:"file_size"`
		FileName     string `json:"file_name"`
		MimeType     string `json:"mime_type"`
		Width        int    `json:"width"`
		Height       int    `json:"height"`
		Duration     int    `json:"duration"`
	}
	// tgFile is getFile's answer.
	tgFile struct {
		FileID       string `json:"file_id"`
		FileUniqueID string `json:"file_unique_id"`
		FileSize     int64  `json:"file_size"`
		FilePath     string `json:"file_path"`
	}
	user struct {
		ID       int64  `json:"id"`
		IsBot    bool   `json:"is_bot"`
		Username string `json:"username"`
	}
	chat struct {
		ID   int64  `json:"id"`
		Type string `json:"type"`
	}
	callbackQuery struct {
		ID      string   `json:"id"`
		From    user     `json:"from"`
		Message *message `json:"message"`
		Data    string   `json:"data"`
	}
	sentMessage struct {
		MessageID int64 `json:"message_id"`
	}
)

// inlineKeyboard is a reply_markup of buttons, one row each.
type inlineButton struct {
	Text         string `json:"text"`
	CallbackData string `json:"callback_data"`
}

func keyboard(rows ...[]inlineButton) string {
	b, _ := json.Marshal(map[string]any{"inline_keyboard": rows})
	return string(b)
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
