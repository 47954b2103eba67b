package demiurgetest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// BotAPI is a loopback server that speaks the Bot API's documented wire
// format (https://core.telegram.org/bots/api): POST /bot<token>/<method>
// with form-encoded parameters, answers {"ok":true,"result":…} or
// {"ok":false,"error_code":…,"description":…,"parameters":{"retry_after":…}}.
// getUpdates long-polls and confirms updates below its offset; sendMessage
// checks MarkdownV2 the way Telegram refuses it ("can't parse entities");
// failures, 429s and 409s can be injected.
type BotAPI struct {
	t     testing.TB
	token string
	srv   *httptest.Server

	mu       sync.Mutex
	cond     *sync.Cond
	updates  []map[string]any
	nextID   int64
	offsets  []string
	calls    []BotAPICall
	nextMsg  int64
	fail500  int // getUpdates answers 500 this many more times
	fail429  int // getUpdates answers 429 retry_after=1 this many more times
	conflict int // getUpdates answers 409 this many more times
	rejectMD bool
	drops    int                 // downloads cut off (the connection closed) this many more times
	files    map[string]*botFile // by file_id (botapi_files.go)
	paths    map[string]*botFile // by file_path
}

// BotAPICall is one request the server answered: the method (for a file
// download "file:<file_path>"), its parameters and, for a multipart
// upload, its files by field name.
type BotAPICall struct {
	Method string
	Params map[string]string
	Files  map[string]BotAPIUpload
}

func NewBotAPI(t testing.TB, token string) *BotAPI {
	b := &BotAPI{t: t, token: token, nextID: 1, nextMsg: 100}
	b.cond = sync.NewCond(&b.mu)
	b.srv = httptest.NewServer(http.HandlerFunc(b.serve))
	t.Cleanup(func() {
		b.mu.Lock()
		b.cond.Broadcast()
		b.mu.Unlock()
		b.srv.Close()
	})
	return b
}

func (b *BotAPI) URL() string { return b.srv.URL }

func botReply(w http.ResponseWriter, status int, body map[string]any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(body)
}

func botError(w http.ResponseWriter, code int, desc string, params map[string]any) {
	body := map[string]any{"ok": false, "error_code": code, "description": desc}
	if params != nil {
		body["parameters"] = params
	}
	botReply(w, code, body)
}

func (b *BotAPI) serve(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/file/bot") {
		b.serveFile(w, r)
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/bot")
	token, method, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 || r.Method != http.MethodPost {
		botError(w, 404, "Not Found", nil)
		return
	}
	if token != b.token {
		botError(w, 401, "Unauthorized", nil)
		return
	}
	params, files, err := readParams(r)
	if err != nil {
		botError(w, 400, "Bad Request: "+err.Error(), nil)
		return
	}
	b.mu.Lock()
	b.calls = append(b.calls, BotAPICall{Method: method, Params: params, Files: files})
	b.cond.Broadcast()
	b.mu.Unlock()
	switch method {
	case "getUpdates":
		b.getUpdates(w, params)
	case "sendMessage":
		if b.refusesMarkdown(w, params, params["text"]) {
			return
		}
		chatID, _ := strconv.ParseInt(params["chat_id"], 10, 64)
		botReply(w, 200, map[string]any{"ok": true, "result": map[string]any{"message_id": b.newMessageID(), "chat": map[string]any{"id": chatID}, "text": params["text"]}})
	case "getFile":
		b.getFile(w, params)
	case "sendPhoto", "sendDocument", "sendVideo", "sendAudio", "sendVoice":
		b.sendMedia(w, method, params, files)
	case "editMessageText", "editMessageReplyMarkup", "answerCallbackQuery", "sendChatAction", "setMyCommands", "deleteWebhook":
		botReply(w, 200, map[string]any{"ok": true, "result": true})
	default:
		botError(w, 404, "Not Found: method not found", nil)
	}
}

func (b *BotAPI) getUpdates(w http.ResponseWriter, params map[string]string) {
	b.mu.Lock()
	switch {
	case b.fail500 > 0:
		b.fail500--
		b.mu.Unlock()
		botError(w, 500, "Internal Server Error", nil)
		return
	case b.fail429 > 0:
		b.fail429--
		b.mu.Unlock()
		botError(w, 429, "Too Many Requests: retry after 1", map[string]any{"retry_after": 1})
		return
	case b.conflict > 0:
		b.conflict--
		b.mu.Unlock()
		botError(w, 409, "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running", nil)
		return
	}
	b.offsets = append(b.offsets, params["offset"])
	offset, _ := strconv.ParseInt(params["offset"], 10, 64)
	timeout, _ := strconv.Atoi(params["timeout"])
	deadline := time.Now().Add(time.Duration(timeout) * time.Second)
	// Updates below the offset are confirmed and forgotten.
	kept := b.updates[:0]
	for _, u := range b.updates {
		if u["update_id"].(int64) >= offset {
			kept = append(kept, u)
		}
	}
	b.updates = kept
	for len(b.updates) == 0 && time.Now().Before(deadline) {
		wake := time.AfterFunc(50*time.Millisecond, func() { b.mu.Lock(); b.cond.Broadcast(); b.mu.Unlock() })
		b.cond.Wait()
		wake.Stop()
	}
	out := append([]map[string]any{}, b.updates...)
	b.mu.Unlock()
	botReply(w, 200, map[string]any{"ok": true, "result": out})
}

// Push queues an update (its update_id is assigned) and returns its id.
func (b *BotAPI) Push(u map[string]any) int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	id := b.nextID
	b.nextID++
	u["update_id"] = id
	b.updates = append(b.updates, u)
	b.cond.Broadcast()
	return id
}

func TelegramPrivateText(userID int64, text string) map[string]any {
	return map[string]any{"message": map[string]any{"message_id": 7, "from": map[string]any{"id": userID, "is_bot": false},
		"chat": map[string]any{"id": userID, "type": "private"}, "text": text}}
}

func TelegramGroupText(userID, chatID int64, text string) map[string]any {
	return map[string]any{"message": map[string]any{"message_id": 8, "from": map[string]any{"id": userID, "is_bot": false},
		"chat": map[string]any{"id": chatID, "type": "supergroup"}, "text": text}}
}

func TelegramCallback(userID int64, data string, messageID int64) map[string]any {
	return map[string]any{"callback_query": map[string]any{"id": fmt.Sprintf("cb%d", time.Now().UnixNano()),
		"from": map[string]any{"id": userID, "is_bot": false}, "data": data,
		"message": map[string]any{"message_id": messageID, "chat": map[string]any{"id": userID, "type": "private"}}}}
}

// WaitCall waits for a call of method whose parameters satisfy match.
func (b *BotAPI) WaitCall(method string, match func(map[string]string) bool) BotAPICall {
	b.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	b.mu.Lock()
	defer b.mu.Unlock()
	for {
		for _, c := range b.calls {
			if c.Method == method && (match == nil || match(c.Params)) {
				return c
			}
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("no %s call; calls: %v", method, b.calls)
		}
		wake := time.AfterFunc(20*time.Millisecond, func() { b.mu.Lock(); b.cond.Broadcast(); b.mu.Unlock() })
		b.cond.Wait()
		wake.Stop()
	}
}

// checkMarkdownV2 refuses text Telegram would not parse: a reserved
// character outside code that is not escaped and not an entity marker.
func checkMarkdownV2(s string) string {
	inCode, inPre, inURL := false, false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' {
			i++
			continue
		}
		if strings.HasPrefix(s[i:], "```") {
			inPre = !inPre
			i += 2
			continue
		}
		if inPre {
			continue
		}
		if c == '`' {
			inCode = !inCode
			continue
		}
		if inCode {
			continue
		}
		if inURL {
			if c == ')' {
				inURL = false
			}
			continue
		}
		if c == '(' && i > 0 && s[i-1] == ']' {
			inURL = true
			continue
		}
		if strings.IndexByte(".!#+-=|{}>()", c) >= 0 {
			return fmt.Sprintf("Bad Request: can't parse entities: Character '%c' is reserved and must be escaped with the preceding '\\'", c)
		}
	}
	return ""
}

// Fail500 makes the next n getUpdates answer 500.
func (b *BotAPI) Fail500(n int) { b.mu.Lock(); b.fail500 = n; b.mu.Unlock() }

// Fail429 makes the next n getUpdates answer 429 with retry_after 1.
func (b *BotAPI) Fail429(n int) { b.mu.Lock(); b.fail429 = n; b.mu.Unlock() }

// Conflict makes the next n getUpdates answer 409.
func (b *BotAPI) Conflict(n int) { b.mu.Lock(); b.conflict = n; b.mu.Unlock() }

// RejectMarkdown makes sendMessage refuse every MarkdownV2 text.
func (b *BotAPI) RejectMarkdown(on bool) { b.mu.Lock(); b.rejectMD = on; b.mu.Unlock() }

// Calls returns the calls so far.
func (b *BotAPI) Calls() []BotAPICall {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]BotAPICall(nil), b.calls...)
}

// refusesMarkdown answers 400 as the Bot API does when text is sent as
// MarkdownV2 and does not parse (or every MarkdownV2 is to be refused),
// and reports whether it did.
func (b *BotAPI) refusesMarkdown(w http.ResponseWriter, params map[string]string, text string) bool {
	if params["parse_mode"] != "MarkdownV2" {
		return false
	}
	err := checkMarkdownV2(text)
	if err == "" && !b.rejectMD {
		return false
	}
	if err == "" {
		err = "Bad Request: can't parse entities: Can't find end of the entity starting at byte offset 0"
	}
	botError(w, 400, err, nil)
	return true
}

// newMessageID is the id of the next message the server sends.
func (b *BotAPI) newMessageID() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.nextMsg++
	return b.nextMsg
}
