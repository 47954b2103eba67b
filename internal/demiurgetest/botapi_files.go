package demiurgetest

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// The Bot API's files (https://core.telegram.org/bots/api#getfile,
// #sending-files): getFile answers a File {file_id, file_unique_id,
// file_size, file_path} ("Bad Request: file is too big" above 20 MB, like
// Telegram); GET /file/bot<token>/<file_path> serves its bytes; sendPhoto
// and sendDocument take the file as a multipart/form-data upload (or a
// file_id / URL string) and answer a Message.

// botFile is a file the server holds for getFile and its download.
type botFile struct {
	id, uniqueID, path string
	data               []byte
	size               int64 // what getFile reports (len(data) unless set)
}

// BotAPIUpload is one file of a multipart upload as the server received it.
type BotAPIUpload struct {
	Filename    string
	ContentType string
	Data        []byte
}

// getFileLimit is Telegram's bound on files a bot may download.
const getFileLimit = 20 << 20

// AddFile makes a file available to getFile (fileID) and the download URL
// (path). reportedSize, when positive, is the size getFile reports instead
// of len(data) (a file that grows, a lying server). nil data: getFile
// answers, the download is 404.
func (b *BotAPI) AddFile(fileID, uniqueID, path string, data []byte, reportedSize int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.files == nil {
		b.files, b.paths = map[string]*botFile{}, map[string]*botFile{}
	}
	f := &botFile{id: fileID, uniqueID: uniqueID, path: path, data: data, size: int64(len(data))}
	if reportedSize > 0 {
		f.size = reportedSize
	}
	b.files[fileID] = f
	if data != nil {
		b.paths[path] = f
	}
}

// DropDownloads makes the next n file downloads end without an answer
// (the connection is closed).
func (b *BotAPI) DropDownloads(n int) { b.mu.Lock(); b.drops = n; b.mu.Unlock() }

// Downloads returns the file paths downloaded so far, in order.
func (b *BotAPI) Downloads() []string {
	var out []string
	for _, c := range b.Calls() {
		if p, ok := strings.CutPrefix(c.Method, "file:"); ok {
			out = append(out, p)
		}
	}
	return out
}

func (b *BotAPI) getFile(w http.ResponseWriter, params map[string]string) {
	b.mu.Lock()
	f := b.files[params["file_id"]]
	b.mu.Unlock()
	switch {
	case f == nil:
		botError(w, 400, "Bad Request: invalid file_id", nil)
	case f.size > getFileLimit:
		botError(w, 400, "Bad Request: file is too big", nil)
	default:
		botReply(w, 200, map[string]any{"ok": true, "result": map[string]any{"file_id": f.id, "file_unique_id": f.uniqueID,
			"file_size": f.size, "file_path": f.path}})
	}
}

// serveFile answers GET /file/bot<token>/<file_path>.
func (b *BotAPI) serveFile(w http.ResponseWriter, r *http.Request) {
	rest := strings.TrimPrefix(r.URL.Path, "/file/bot")
	token, path, ok := strings.Cut(rest, "/")
	if !ok || r.Method != http.MethodGet || token != b.token {
		http.Error(w, "Not Found", http.StatusNotFound)
		return
	}
	b.mu.Lock()
	b.calls = append(b.calls, BotAPICall{Method: "file:" + path})
	b.cond.Broadcast()
	f := b.paths[path]
	drop := b.drops > 0
	if drop {
		b.drops--
	}
	b.mu.Unlock()
	if drop {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close() // the client sees the connection end without an answer
		}
		return
	}
	if f == nil {
		http.Error(w, "Not Found", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	if f.size != int64(len(f.data)) {
		// A file whose size getFile misreports is streamed without a
		// Content-Length: only the bytes tell.
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		w.Write(f.data)
		return
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(f.data)))
	w.Write(f.data)
}

// readParams reads a method's parameters: a form (urlencoded or
// multipart) or a query string; a multipart form's files are returned by
// field name.
func readParams(r *http.Request) (map[string]string, map[string]BotAPIUpload, error) {
	params := map[string]string{}
	if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data") {
		if err := r.ParseMultipartForm(64 << 20); err != nil {
			return nil, nil, errors.New("invalid multipart form")
		}
		for k, v := range r.MultipartForm.Value {
			params[k] = v[0]
		}
		files := map[string]BotAPIUpload{}
		for field, hs := range r.MultipartForm.File {
			f, err := hs[0].Open()
			if err != nil {
				return nil, nil, err
			}
			data, err := io.ReadAll(f)
			f.Close()
			if err != nil {
				return nil, nil, err
			}
			files[field] = BotAPIUpload{Filename: hs[0].Filename, ContentType: hs[0].Header.Get("Content-Type"), Data: data}
		}
		return params, files, nil
	}
	if err := r.ParseForm(); err != nil {
		return nil, nil, errors.New("invalid form")
	}
	for k := range r.Form {
		params[k] = r.Form.Get(k)
	}
	return params, nil, nil
}

// sendMedia answers sendPhoto, sendDocument, sendVideo, sendAudio and
// sendVoice: the file (field photo, document, video, audio, voice) is an
// upload ("attach://<name>" or the field itself) or a file_id/URL string;
// a MarkdownV2 caption is checked like a message's text.
func (b *BotAPI) sendMedia(w http.ResponseWriter, method string, params map[string]string, files map[string]BotAPIUpload) {
	field := map[string]string{"sendPhoto": "photo", "sendDocument": "document", "sendVideo": "video",
		"sendAudio": "audio", "sendVoice": "voice"}[method]
	_, uploaded := files[field]
	if ref, ok := strings.CutPrefix(params[field], "attach://"); ok {
		_, uploaded = files[ref]
	}
	if !uploaded && params[field] == "" {
		botError(w, 400, fmt.Sprintf("Bad Request: there is no %s in the request", field), nil)
		return
	}
	if len(params["caption"]) > 0 && b.refusesMarkdown(w, params, params["caption"]) {
		return
	}
	chatID, _ := strconv.ParseInt(params["chat_id"], 10, 64)
	botReply(w, 200, map[string]any{"ok": true, "result": map[string]any{"message_id": b.newMessageID(), "chat": map[string]any{"id": chatID},
		"caption": params["caption"]}})
}

// TelegramPrivatePhoto is a photo message in a private chat: the sizes of
// one photo (file ids "<fileID>-s", "<fileID>" for the largest), with a
// caption when not empty.
func TelegramPrivatePhoto(userID int64, fileID string, size int64, caption string) map[string]any {
	m := map[string]any{"message_id": 9, "from": map[string]any{"id": userID, "is_bot": false},
		"chat": map[string]any{"id": userID, "type": "private"},
		"photo": []any{
			map[string]any{"file_id": fileID + "-s", "file_unique_id": "u-" + fileID + "-s", "width": 90, "height": 60},
			map[string]any{"file_id": fileID, "file_unique_id": "u-" + fileID, "width": 1280, "height": 853, "file_size": size},
		}}
	if caption != "" {
		m["caption"] = caption
	}
	return map[string]any{"message": m}
}

// TelegramPrivateDocument is a document message in a private chat.
func TelegramPrivateDocument(userID int64, fileID, name, mime string, size int64, caption string) map[string]any {
	m := map[string]any{"message_id": 10, "from": map[string]any{"id": userID, "is_bot": false},
		"chat":     map[string]any{"id": userID, "type": "private"},
		"document": map[string]any{"file_id": fileID, "file_unique_id": "u-" + fileID, "file_name": name, "mime_type": mime, "file_size": size}}
	if caption != "" {
		m["caption"] = caption
	}
	return map[string]any{"message": m}
}

// TelegramPrivateVoice is a voice message in a private chat.
func TelegramPrivateVoice(userID int64, fileID string, size int64, seconds int) map[string]any {
	return map[string]any{"message": map[string]any{"message_id": 11, "from": map[string]any{"id": userID, "is_bot": false},
		"chat":  map[string]any{"id": userID, "type": "private"},
		"voice": map[string]any{"file_id": fileID, "file_unique_id": "u-" + fileID, "mime_type": "audio/ogg", "duration": seconds, "file_size": size}}}
}

// TelegramGroupPhoto is a photo with a caption in a group chat.
func TelegramGroupPhoto(userID, chatID int64, fileID, caption string) map[string]any {
	u := TelegramPrivatePhoto(userID, fileID, 3, caption)
	m := u["message"].(map[string]any)
	m["chat"] = map[string]any{"id": chatID, "type": "supergroup"}
	return u
}
