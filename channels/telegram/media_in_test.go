package telegram_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/channels/telegram"
	"github.com/demiurge/demiurge/internal/demiurgetest"
)

// logBuffer is a log destination tests read.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// A photo (its largest size) and a document in a private chat are stored
// under the attachment root with their bytes before the message is
// accepted, and the envelope carries their references; the caption is the
// text, a file alone is "[telegram attachment]".
func TestTelegramPrivateFilesAreStored(t *testing.T) {
	api := demiurgetest.NewBotAPI(t, token)
	photo, doc, voice := []byte("\xff\xd8\xffjpeg bytes"), []byte("%PDF-1.7 report"), []byte("OggS voice")
	api.AddFile("P1", "u-P1", "photos/file_0.jpg", photo, 0)
	api.AddFile("D1", "u-D1", "documents/file_1", doc, 0)
	api.AddFile("V1", "u-V1", "voice/file_2.oga", voice, 0)
	root := t.TempDir()
	ch := newChannel(t, api, telegram.Config{AttachmentRoot: root})
	in := &inbox{}
	run(t, ch, in)
	api.Push(demiurgetest.TelegramPrivatePhoto(42, "P1", int64(len(photo)), "what is *this*?"))
	api.Push(demiurgetest.TelegramPrivateDocument(42, "D1", "../Q3 report.pdf", "application/pdf", int64(len(doc)), ""))
	api.Push(demiurgetest.TelegramPrivateVoice(42, "V1", int64(len(voice)), 3))
	waitUntil(t, "the three messages", func() bool { return len(in.accepted()) == 3 })
	got := in.accepted()

	p := got[0]
	if p.Text != "what is *this*?" || len(p.Attachments) != 1 || p.Metadata["telegram_media_only"] != false {
		t.Fatalf("photo envelope %+v", p)
	}
	a := p.Attachments[0]
	if a.Kind != demiurge.AttachmentImage || a.MediaType != "image/jpeg" || a.Filename != "file_0.jpg" || a.Source != "telegram" ||
		a.Width != 1280 || a.Platform["file_id"] != "P1" || a.Platform["kind"] != "photo" || !strings.HasPrefix(a.ID, "telegram:42:9:") {
		t.Fatalf("photo attachment %+v", a)
	}
	checkStored(t, root, a, photo)

	d := got[1]
	if d.Text != "[telegram attachment]" || len(d.Attachments) != 1 || d.Metadata["telegram_media_only"] != true {
		t.Fatalf("document envelope %+v", d)
	}
	if a := d.Attachments[0]; a.Kind != demiurge.AttachmentDocument || a.Filename != "Q3_report.pdf" || a.MediaType != "application/pdf" {
		t.Fatalf("document attachment %+v", a)
	}
	checkStored(t, root, d.Attachments[0], doc)

	v := got[2].Attachments[0]
	if v.Kind != demiurge.AttachmentAudio || v.MediaType != "audio/ogg" || v.DurationSeconds != 3 || v.Filename != "file_2.oga" {
		t.Fatalf("voice attachment %+v", v)
	}
	checkStored(t, root, v, voice)
	if dl := api.Downloads(); len(dl) != 3 {
		t.Fatalf("downloads %v", dl)
	}
}

func checkStored(t *testing.T, root string, a demiurge.InboundAttachment, want []byte) {
	t.Helper()
	rel, err := filepath.Rel(root, a.Path)
	if err != nil || !strings.HasPrefix(rel, telegram.AttachmentDir+string(filepath.Separator)) {
		t.Fatalf("stored at %s, outside %s/%s", a.Path, root, telegram.AttachmentDir)
	}
	b, err := os.ReadFile(a.Path)
	if err != nil || !bytes.Equal(b, want) || a.SizeBytes != int64(len(want)) {
		t.Fatalf("stored %q (%d bytes recorded), %v; want %q", b, a.SizeBytes, err, want)
	}
	entries, _ := os.ReadDir(filepath.Dir(a.Path))
	if len(entries) != 1 {
		t.Fatalf("the attachment's directory holds %d entries (a partial file left?)", len(entries))
	}
}

// A file over the limit is refused: by its declared size before getFile,
// by getFile's size before the download, by the bytes read when both
// understate it; the user is told, nothing is kept, and a file alone
// starts no turn while a captioned one goes on without its file.
func TestTelegramOversizedFilesAreRefused(t *testing.T) {
	api := demiurgetest.NewBotAPI(t, token)
	big := bytes.Repeat([]byte("x"), 64)
	api.AddFile("BIG", "u-BIG", "documents/big.bin", big, 0)
	api.AddFile("LIAR", "u-LIAR", "documents/liar.bin", big, 10) // getFile says 10 bytes
	api.AddFile("HUGE", "u-HUGE", "documents/huge.bin", []byte("x"), 1000)
	api.AddFile("TOOBIG", "u-TOOBIG", "documents/toobig.bin", []byte("x"), 30<<20) // getFile: "file is too big"
	root := t.TempDir()
	ch := newChannel(t, api, telegram.Config{AttachmentRoot: root, MaxAttachmentBytes: 32})
	in := &inbox{}
	run(t, ch, in)
	api.Push(demiurgetest.TelegramPrivateDocument(42, "BIG", "big.bin", "", 64, ""))
	api.Push(demiurgetest.TelegramPrivateDocument(42, "HUGE", "huge.bin", "", 0, "read this"))
	api.Push(demiurgetest.TelegramPrivateDocument(42, "LIAR", "liar.bin", "", 0, ""))
	api.Push(demiurgetest.TelegramPrivateDocument(42, "TOOBIG", "toobig.bin", "", 0, ""))
	api.Push(demiurgetest.TelegramPrivateText(42, "after"))
	waitUntil(t, "the messages", func() bool { return len(in.accepted()) == 2 })
	got := in.accepted()
	if got[0].Text != "read this" || len(got[0].Attachments) != 0 || got[1].Text != "after" {
		t.Fatalf("accepted %+v", got)
	}
	errs, _ := got[0].Metadata["telegram_attachment_errors"].([]any)
	if len(errs) != 1 || !strings.Contains(errs[0].(string), "too large") {
		t.Fatalf("attachment errors %v", got[0].Metadata)
	}
	for _, c := range api.Calls() {
		if c.Method == "getFile" && c.Params["file_id"] == "BIG" {
			t.Fatal("a file declared too large was asked for with getFile")
		}
	}
	if dl := api.Downloads(); len(dl) != 1 || dl[0] != "documents/liar.bin" {
		t.Fatalf("downloads %v, want only the one whose size was understated", dl)
	}
	// The three files alone are refused in the spec's words; the one with
	// a caption goes on as its text, unanswered.
	waitUntil(t, "the refusals", func() bool {
		n := 0
		for _, c := range api.Calls() {
			if c.Method == "sendMessage" {
				if c.Params["text"] != "Telegram attachment could not be downloaded." {
					t.Fatalf("reply %q", c.Params["text"])
				}
				n++
			}
		}
		return n == 3
	})
	var files []string
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return nil
	})
	if len(files) != 0 {
		t.Fatalf("refused files were kept: %v", files)
	}
}

// Files in a group are ignored (its caption is no text there, so the
// message is not admitted), and nothing is downloaded, nor for a user not
// allowed; without an attachment root a private file alone is ignored too.
func TestTelegramGroupFilesIgnored(t *testing.T) {
	api := demiurgetest.NewBotAPI(t, token)
	api.AddFile("G1", "u-G1", "photos/g.jpg", []byte("jpeg"), 0)
	ch := newChannel(t, api, telegram.Config{AttachmentRoot: t.TempDir(), AllowedChats: []int64{-100}, BotUsername: "demibot"})
	in := &inbox{}
	stop := run(t, ch, in)
	api.Push(demiurgetest.TelegramGroupPhoto(42, -100, "G1", "@demibot look"))
	api.Push(demiurgetest.TelegramPrivatePhoto(7, "G1", 4, "a user not allowed"))
	api.Push(demiurgetest.TelegramGroupText(42, -100, "@demibot hello"))
	waitUntil(t, "the group text", func() bool { return len(in.accepted()) == 1 })
	if e := in.accepted()[0]; e.Text != "hello" || len(e.Attachments) != 0 {
		t.Fatalf("accepted %+v", e)
	}
	api.WaitCall("sendMessage", func(p map[string]string) bool {
		return p["chat_id"] == "7" && p["text"] == "Telegram access denied for this user or chat."
	})
	for _, c := range api.Calls() {
		if c.Method == "getFile" || strings.HasPrefix(c.Method, "file:") {
			t.Fatalf("a group's file, or one of a user not allowed, was fetched: %s", c.Method)
		}
	}

	// One poller at a time: the first would take the second's updates.
	stop()
	none := newChannel(t, api, telegram.Config{})
	in2 := &inbox{}
	run(t, none, in2)
	api.Push(demiurgetest.TelegramPrivatePhoto(42, "G1", 4, ""))
	api.Push(demiurgetest.TelegramPrivateText(42, "text"))
	waitUntil(t, "the text", func() bool { return len(in2.accepted()) >= 1 })
	if e := in2.accepted()[0]; e.Text != "text" {
		t.Fatalf("accepted %+v", e)
	}
}

// A download that fails is logged and recorded without the token (the
// file URL holds it), and the user is told.
func TestTelegramDownloadFailureKeepsTheTokenOut(t *testing.T) {
	api := demiurgetest.NewBotAPI(t, token)
	api.AddFile("GONE", "u-GONE", "documents/gone.pdf", []byte("pdf"), 0)
	api.AddFile("ELSE", "u-ELSE", "documents/other.pdf", nil, 0) // getFile works, the path is not served
	logs := &logBuffer{}
	root := t.TempDir()
	ch := newChannel(t, api, telegram.Config{AttachmentRoot: root,
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	in := &inbox{}
	run(t, ch, in)
	api.Push(map[string]any{"message": map[string]any{"message_id": 12, "from": map[string]any{"id": 42},
		"chat": map[string]any{"id": 42, "type": "private"}, "caption": "see attached",
		"document": map[string]any{"file_id": "ELSE", "file_unique_id": "u-ELSE", "file_name": "gone.pdf"}}})
	waitUntil(t, "the message", func() bool { return len(in.accepted()) == 1 })
	e := in.accepted()[0]
	errs, _ := e.Metadata["telegram_attachment_errors"].([]any)
	if len(errs) != 1 || errs[0] != "telegram file download failed (404): Not Found" || len(e.Attachments) != 0 {
		t.Fatalf("envelope %+v", e)
	}
	for _, c := range api.Calls() {
		if c.Method == "sendMessage" {
			t.Fatalf("a message with a caption was answered %q: its text goes on as a turn", c.Params["text"])
		}
	}
	if l := logs.String(); strings.Contains(l, token) || !strings.Contains(l, "telegram attachment not stored") {
		t.Fatalf("log %q", l)
	}
	for _, err := range errs {
		if strings.Contains(err.(string), token) {
			t.Fatal("the token reached the inbound's metadata")
		}
	}
}

// A redirect from the Bot API is never followed: the file URL holds the
// token, which a Referer would carry to the redirect's host.
func TestTelegramDownloadRedirectNotFollowed(t *testing.T) {
	var elsewhere atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { elsewhere.Add(1) }))
	defer other.Close()
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/getFile"):
			fmt.Fprint(w, `{"ok":true,"result":{"file_id":"F","file_unique_id":"U","file_size":3,"file_path":"documents/a.txt"}}`)
		case strings.HasPrefix(r.URL.Path, "/file/"):
			http.Redirect(w, r, other.URL+"/steal", http.StatusFound)
		default:
			fmt.Fprint(w, `{"ok":true,"result":[]}`)
		}
	}))
	defer api.Close()
	ch, err := telegram.New(telegram.Config{Name: "telegram", Token: token, APIBaseURL: api.URL, AttachmentRoot: t.TempDir(),
		AllowedUsers: []int64{42}})
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	env, err := telegram.InboundForTest(ch, demiurgetest.TelegramPrivateDocument(42, "F", "a.txt", "text/plain", 3, "see"))
	if err != nil {
		t.Fatal(err)
	}
	errs, _ := env.Metadata["telegram_attachment_errors"].([]any)
	if elsewhere.Load() != 0 || len(errs) != 1 || errs[0] != "telegram file download failed (302): Found" {
		t.Fatalf("redirect followed %d times; errors %v", elsewhere.Load(), errs)
	}
}

// A download that got no answer is tried again; one that keeps failing
// is given up after four attempts, and the caption goes on unanswered.
func TestTelegramDownloadRetried(t *testing.T) {
	api := demiurgetest.NewBotAPI(t, token)
	api.AddFile("D1", "u-D1", "documents/a.txt", []byte("abc"), 0)
	root := t.TempDir()
	ch := newChannel(t, api, telegram.Config{AttachmentRoot: root, RetryWait: time.Millisecond})
	in := &inbox{}
	run(t, ch, in)
	api.DropDownloads(2)
	api.Push(demiurgetest.TelegramPrivateDocument(42, "D1", "a.txt", "text/plain", 3, ""))
	waitUntil(t, "the file", func() bool { return len(in.accepted()) == 1 })
	first := len(api.Downloads())
	if e := in.accepted()[0]; len(e.Attachments) != 1 || first < 3 {
		t.Fatalf("envelope %+v after %d downloads", e, first)
	}
	checkStored(t, root, in.accepted()[0].Attachments[0], []byte("abc"))

	api.DropDownloads(10)
	api.Push(demiurgetest.TelegramPrivateDocument(42, "D1", "a.txt", "text/plain", 3, "keep trying"))
	waitUntil(t, "the caption", func() bool { return len(in.accepted()) == 2 })
	e := in.accepted()[1]
	errs, _ := e.Metadata["telegram_attachment_errors"].([]any)
	// Four attempts; Go's transport may repeat a GET on a reused
	// connection once by itself.
	if n := len(api.Downloads()) - first; len(e.Attachments) != 0 || n < 4 || n > 8 || len(errs) != 1 || strings.Contains(errs[0].(string), token) {
		t.Fatalf("envelope %+v after %d downloads", e, n)
	}
	for _, c := range api.Calls() {
		if c.Method == "sendMessage" {
			t.Fatalf("a message with a caption was answered %q", c.Params["text"])
		}
	}
}
