package telegram_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/channels/telegram"
	"github.com/demiurge/demiurge/internal/demiurgetest"
)

// openUnder is an OpenUpload that allows the files of dir only.
func openUnder(dir string) func(string, string) (*os.File, error) {
	return func(_ string, p string) (*os.File, error) {
		if filepath.Dir(p) != dir {
			return nil, demiurge.Errorf(demiurge.EUNAUTHORIZED, "attachment path is outside the workspace or session: %s", p)
		}
		return os.Open(p)
	}
}

// An image and a file of a delivery are uploaded as multipart/form-data
// (sendPhoto, sendDocument) with their bytes, names and MarkdownV2
// captions; a URL is handed over as it is; text blocks go in order.
func TestTelegramSendsMedia(t *testing.T) {
	api := demiurgetest.NewBotAPI(t, token)
	dir := t.TempDir()
	png, pdf := []byte("\x89PNG\r\n\x1a\nimage"), []byte("%PDF-1.7 body")
	os.WriteFile(filepath.Join(dir, "chart.png"), png, 0o600)
	os.WriteFile(filepath.Join(dir, "report.pdf"), pdf, 0o600)
	ch := newChannel(t, api, telegram.Config{OpenUpload: openUnder(dir), ReplyToMode: "first"})
	to := demiurge.Inbound{InboundEnvelope: demiurge.InboundEnvelope{Source: "42", ReplyTo: "7"}}
	out := demiurge.Outbound{SessionID: "sess_1", Blocks: []demiurge.DeliveryBlock{
		{Type: demiurge.BlockText, Text: "Here it is."},
		{Type: demiurge.BlockImage, URI: filepath.Join(dir, "chart.png"), Caption: "Sales (Q3)!"},
		{Type: demiurge.BlockFile, URI: filepath.Join(dir, "report.pdf"), Caption: "The **report**", MediaType: "application/pdf"},
		{Type: demiurge.BlockImage, URI: "https://example.org/cat.jpg"},
		{Type: demiurge.BlockAudio, URI: "https://example.org/note.ogg"},
		{Type: demiurge.BlockAudio, URI: "https://example.org/song.mp3"},
		{Type: demiurge.BlockVideo, URI: "https://example.org/clip.mp4"},
		{Type: demiurge.BlockVideo, URI: "https://example.org/clip.mkv"},
	}}
	if err := ch.Send(context.Background(), to, out); err != nil {
		t.Fatal(err)
	}
	var media []demiurgetest.BotAPICall
	for _, c := range api.Calls() {
		if strings.HasPrefix(c.Method, "send") && c.Method != "sendChatAction" {
			media = append(media, c)
		}
	}
	if len(media) != 8 || media[0].Method != "sendMessage" || media[0].Params["reply_to_message_id"] != "7" {
		t.Fatalf("calls %+v", media)
	}
	photo := media[1]
	if photo.Method != "sendPhoto" || photo.Params["caption"] != `Sales \(Q3\)\!` || photo.Params["parse_mode"] != "MarkdownV2" ||
		photo.Params["chat_id"] != "42" || photo.Params["reply_to_message_id"] != "" {
		t.Fatalf("photo %+v", photo.Params)
	}
	if up := photo.Files["photo"]; !bytes.Equal(up.Data, png) || up.Filename != "chart.png" || up.ContentType != "image/png" {
		t.Fatalf("photo upload %q %q %q", up.Data, up.Filename, up.ContentType)
	}
	doc := media[2]
	if doc.Method != "sendDocument" || doc.Params["caption"] != "The *report*" {
		t.Fatalf("document %+v", doc.Params)
	}
	if up := doc.Files["document"]; !bytes.Equal(up.Data, pdf) || up.Filename != "report.pdf" || up.ContentType != "application/pdf" {
		t.Fatalf("document upload %q %q %q", up.Data, up.Filename, up.ContentType)
	}
	if u := media[3]; u.Method != "sendPhoto" || u.Params["photo"] != "https://example.org/cat.jpg" || len(u.Files) != 0 {
		t.Fatalf("URL photo %+v", u)
	}
	for i, want := range []string{"sendVoice voice", "sendAudio audio", "sendVideo video", "sendDocument document"} {
		c := media[4+i]
		method, field, _ := strings.Cut(want, " ")
		if c.Method != method || c.Params[field] == "" {
			t.Fatalf("block %d: %s %v, want %s", 4+i, c.Method, c.Params, want)
		}
	}
}

// A caption Telegram cannot parse is sent again as plain text with the
// file read again; a file the turn may not read is never uploaded: the
// user gets its text fallback and the delivery fails with the reason.
func TestTelegramMediaFallbacks(t *testing.T) {
	api := demiurgetest.NewBotAPI(t, token)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.png"), []byte("png"), 0o600)
	secret := filepath.Join(t.TempDir(), "id_rsa")
	os.WriteFile(secret, []byte("PRIVATE KEY"), 0o600)
	ch := newChannel(t, api, telegram.Config{OpenUpload: openUnder(dir)})
	to := demiurge.Inbound{InboundEnvelope: demiurge.InboundEnvelope{Source: "42"}}

	api.RejectMarkdown(true)
	if err := ch.Send(context.Background(), to, demiurge.Outbound{Blocks: []demiurge.DeliveryBlock{
		{Type: demiurge.BlockImage, URI: filepath.Join(dir, "a.png"), Caption: "**bold** caption"}}}); err != nil {
		t.Fatal(err)
	}
	api.RejectMarkdown(false)
	plain := api.WaitCall("sendPhoto", func(p map[string]string) bool { return p["parse_mode"] == "" })
	if plain.Params["caption"] != "bold caption" || string(plain.Files["photo"].Data) != "png" {
		t.Fatalf("plain resend %+v %q", plain.Params, plain.Files["photo"].Data)
	}

	err := ch.Send(context.Background(), to, demiurge.Outbound{Blocks: []demiurge.DeliveryBlock{
		{Type: demiurge.BlockFile, URI: secret, Caption: "my key"}}})
	if demiurge.ErrorCode(err) != demiurge.EUNAUTHORIZED {
		t.Fatalf("a file outside: %v", err)
	}
	api.WaitCall("sendMessage", func(p map[string]string) bool { return p["text"] == "my key\n\\[file not sent: id\\_rsa\\]" })
	for _, c := range api.Calls() {
		for _, f := range c.Files {
			if strings.Contains(string(f.Data), "PRIVATE KEY") {
				t.Fatal("a file outside the turn's reach was uploaded")
			}
		}
	}

	dead, err := telegram.New(telegram.Config{Name: "telegram", Token: token, APIBaseURL: "http://127.0.0.1:1", OpenUpload: openUnder(dir)})
	if err != nil {
		t.Fatal(err)
	}
	err = dead.Send(context.Background(), to, demiurge.Outbound{Blocks: []demiurge.DeliveryBlock{
		{Type: demiurge.BlockImage, URI: filepath.Join(dir, "a.png")}}})
	if demiurge.ErrorCode(err) != demiurge.EUNAVAILABLE || strings.Contains(err.Error(), token) {
		t.Fatalf("an upload to an unreachable API: %v", err)
	}

	closed := newChannel(t, api, telegram.Config{})
	err = closed.Send(context.Background(), to, demiurge.Outbound{Blocks: []demiurge.DeliveryBlock{
		{Type: demiurge.BlockImage, URI: filepath.Join(dir, "a.png")}}})
	if demiurge.ErrorCode(err) != demiurge.EUNAUTHORIZED || strings.Contains(err.Error(), token) {
		t.Fatalf("no opener: %v", err)
	}
}
