package host_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/demiurge/demiurge/host"
	"github.com/demiurge/demiurge/internal/demiurgetest"
)

// mediaSlots makes the assistant core's input slot list the turn's
// attachments after the text (kind|filename|media type|size|path, one a
// line) and its output slot send a picture and a file when the answer
// asks for one.
func mediaSlots(t *testing.T, home string) {
	t.Helper()
	dir := filepath.Join(home, "agents", "assistant", "agent")
	files := map[string]string{
		"input/base_input/module.star": `def process(ctx):
    lines = [ctx.input.raw_text]
    for a in ctx.input.attachments:
        lines.append("%s|%s|%s|%d|%s" % (a["kind"], a["filename"], a["media_type"], a["size_bytes"], a["path"]))
    ctx.input.add_context("\n".join(lines), role = "user")
`,
		"output/base_output/module.star": `def process(ctx):
    text = ctx.output.response_text
    if text:
        ctx.output.send_text(text)
    if "picture" in text:
        ctx.output.send_image("out/chart.png", caption = "Chart *Q3*", write_history = False)
        ctx.output.send_file("out/data.csv", caption = "the data", write_history = False)
`,
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// End to end through the gateway: a photo and a document sent in a
// private chat reach the turn's ctx.input.attachments with their bytes in
// the core's workspace; an output slot's send_image and send_file arrive
// at the Bot API as multipart uploads with their bytes and captions; the
// token reaches no log.
func TestGatewayTelegramMedia(t *testing.T) {
	api := demiurgetest.NewBotAPI(t, botToken)
	photo, doc := []byte("\xff\xd8\xffphoto"), []byte("col\n1\n")
	api.AddFile("P1", "u-P1", "photos/file_0.jpg", photo, 0)
	api.AddFile("D1", "u-D1", "documents/file_1.csv", doc, 0)
	home := initHome(t)
	writeChannels(t, home, telegramBlock(api.URL())+"    message_format: plain\n")
	mediaSlots(t, home)
	ws := filepath.Join(home, "workspace")
	png, csv := []byte("\x89PNG chart"), []byte("a,b\n1,2\n")
	os.MkdirAll(filepath.Join(ws, "out"), 0o700)
	os.WriteFile(filepath.Join(ws, "out", "chart.png"), png, 0o600)
	os.WriteFile(filepath.Join(ws, "out", "data.csv"), csv, 0o600)
	h, err := host.Open(context.Background(), host.Options{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	if _, err := h.StartGateway(context.Background(), host.GatewayOptions{Drain: 5 * time.Second}); err != nil {
		t.Fatal(err)
	}

	api.Push(demiurgetest.TelegramPrivatePhoto(42, "P1", int64(len(photo)), "look at this"))
	reply := api.WaitCall("sendMessage", func(p map[string]string) bool { return strings.HasPrefix(p["text"], "[fake] look at this\n") })
	checkAttachmentLine(t, ws, reply.Params["text"], "image|file_0.jpg|image/jpeg", photo)

	api.Push(demiurgetest.TelegramPrivateDocument(42, "D1", "table.csv", "text/csv", int64(len(doc)), ""))
	reply = api.WaitCall("sendMessage", func(p map[string]string) bool {
		return strings.HasPrefix(p["text"], "[fake] [telegram attachment]\n")
	})
	checkAttachmentLine(t, ws, reply.Params["text"], "document|table.csv|text/csv", doc)

	api.Push(demiurgetest.TelegramPrivateText(42, "a picture please"))
	up := api.WaitCall("sendPhoto", nil)
	if f := up.Files["photo"]; !bytes.Equal(f.Data, png) || f.Filename != "chart.png" || up.Params["caption"] != "Chart *Q3*" || up.Params["chat_id"] != "42" {
		t.Fatalf("sendPhoto %+v %q", up.Params, f.Data)
	}
	up = api.WaitCall("sendDocument", nil)
	if f := up.Files["document"]; !bytes.Equal(f.Data, csv) || f.Filename != "data.csv" || up.Params["caption"] != "the data" {
		t.Fatalf("sendDocument %+v %q", up.Params, f.Data)
	}
	logs, err := os.ReadFile(filepath.Join(home, "logs", "host.log"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(logs), botToken) {
		t.Fatal("the bot token reached the Host log")
	}
}

// checkAttachmentLine finds the attachment line with prefix in the turn's
// echoed text and checks the stored file: in the workspace, with want's
// bytes.
func checkAttachmentLine(t *testing.T, ws, text, prefix string, want []byte) {
	t.Helper()
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, prefix+"|") {
			continue
		}
		parts := strings.Split(line, "|")
		size, _ := strconv.Atoi(parts[3])
		path := parts[4]
		if !strings.HasPrefix(path, filepath.Join(ws, ".demiurge-telegram")+string(filepath.Separator)) || size != len(want) {
			t.Fatalf("attachment %q not in the workspace %s, or size %d != %d", line, ws, size, len(want))
		}
		b, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(b, want) {
			t.Fatalf("stored %q, %v; want %q", b, err, want)
		}
		return
	}
	t.Fatalf("no %s attachment in %q", prefix, text)
}

// The default core names a file that came with a message to the model,
// by its place in the workspace.
func TestGatewayTelegramFileReachesTheModel(t *testing.T) {
	api := demiurgetest.NewBotAPI(t, botToken)
	photo := []byte("\xff\xd8\xffphoto")
	api.AddFile("P1", "u-P1", "photos/file_0.jpg", photo, 0)
	home := initHome(t)
	writeChannels(t, home, telegramBlock(api.URL())+"    message_format: plain\n")
	h, err := host.Open(context.Background(), host.Options{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	if _, err := h.StartGateway(context.Background(), host.GatewayOptions{Drain: 5 * time.Second}); err != nil {
		t.Fatal(err)
	}
	api.Push(demiurgetest.TelegramPrivatePhoto(42, "P1", int64(len(photo)), ""))
	reply := api.WaitCall("sendMessage", func(p map[string]string) bool { return strings.HasPrefix(p["text"], "[fake] ") })
	want := regexp.MustCompile(`^\[fake\] \[telegram attachment\]\n\[attached image: \.demiurge-telegram/42/9-[0-9a-f]{12}/file_0\.jpg \(image/jpeg, 8 bytes\)\]$`)
	if !want.MatchString(reply.Params["text"]) {
		t.Fatalf("reply %q", reply.Params["text"])
	}
}
