package telegram

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/demiurge/demiurge"
)

// DefaultMaxAttachmentBytes bounds an inbound file by default: 20 MiB,
// the most the Bot API lets a bot download (getFile).
const DefaultMaxAttachmentBytes = 20 << 20

// AttachmentDir is the directory under Config.AttachmentRoot that holds
// the inbound files: <chat>/<message id>-<digest>/<file name>.
const AttachmentDir = ".demiurge-telegram"

// mediaOnlyText is the text of a message that is only a file.
const mediaOnlyText = "[telegram attachment]"

// media is the one file of a message this channel takes.
type media struct {
	ref             fileRef
	tgKind          string // photo, voice, audio, video or document
	kind, mediaType string // demiurge.Attachment*, its media type
}

// mediaOf picks the message's file (spec §3.8.6): the largest size of a
// photo (by file_size, else width×height), else the first of voice,
// audio, video and document.
func mediaOf(m *message) (media, bool) {
	if len(m.Photo) > 0 {
		best := m.Photo[0]
		for _, p := range m.Photo[1:] {
			if p.FileSize > best.FileSize || p.FileSize == best.FileSize && p.Width*p.Height > best.Width*best.Height {
				best = p
			}
		}
		return media{ref: best, tgKind: "photo", kind: demiurge.AttachmentImage, mediaType: "image/jpeg"}, true
	}
	for _, f := range []struct {
		ref          *fileRef
		tgKind, kind string
		mediaType    string
	}{
		{m.Voice, "voice", demiurge.AttachmentAudio, "audio/ogg"},
		{m.Audio, "audio", demiurge.AttachmentAudio, "audio/mpeg"},
		{m.Video, "video", demiurge.AttachmentVideo, "video/mp4"},
		{m.Document, "document", "", "application/octet-stream"},
	} {
		if f.ref == nil || f.ref.FileID == "" {
			continue
		}
		md := media{ref: *f.ref, tgKind: f.tgKind, kind: f.kind, mediaType: cmp.Or(f.ref.MimeType, f.mediaType)}
		if md.kind == "" {
			md.kind = documentKind(md.mediaType)
		}
		return md, true
	}
	return media{}, false
}

func documentKind(mediaType string) string {
	switch {
	case strings.HasPrefix(mediaType, "image/"):
		return demiurge.AttachmentImage
	case strings.HasPrefix(mediaType, "audio/"):
		return demiurge.AttachmentAudio
	case strings.HasPrefix(mediaType, "video/"):
		return demiurge.AttachmentVideo
	}
	return demiurge.AttachmentDocument
}

// fetch stores the message's file md under the attachment root and
// returns its reference. A file larger than MaxAttachmentBytes — as
// declared in the message, by getFile, or found while downloading — is a
// *TooLargeError; a declared size over the limit is refused before
// getFile, so nothing is downloaded. The file is written to a partial
// name and renamed when complete, through an os.Root of the attachment
// root, so no symbolic link in the workspace can make it land outside.
// A request that got no answer is tried again after 0.5, 1 and 2 s
// (getFile and the download are safe to repeat).
func (c *Channel) fetch(ctx context.Context, m *message, md media) (demiurge.InboundAttachment, error) {
	for attempt := 0; ; attempt++ {
		att, err := c.fetchOnce(ctx, m, md)
		var tr *transportError
		if err == nil || !errors.As(err, &tr) || attempt == 3 || ctx.Err() != nil {
			return att, err
		}
		sleep(ctx, c.cfg.RetryWait<<attempt)
	}
}

func (c *Channel) fetchOnce(ctx context.Context, m *message, md media) (demiurge.InboundAttachment, error) {
	limit := c.cfg.MaxAttachmentBytes
	if md.ref.FileSize > limit {
		return demiurge.InboundAttachment{}, &TooLargeError{Size: md.ref.FileSize, Max: limit}
	}
	var f tgFile
	if err := c.api.call(ctx, "getFile", url.Values{"file_id": {md.ref.FileID}}, &f); err != nil {
		var api *APIError
		if errors.As(err, &api) && strings.Contains(strings.ToLower(api.Description), "file is too big") {
			return demiurge.InboundAttachment{}, &TooLargeError{Size: -1, Max: limit} // over Telegram's own bound
		}
		return demiurge.InboundAttachment{}, err
	}
	if f.FilePath == "" {
		return demiurge.InboundAttachment{}, errors.New("telegram getFile answered no file_path")
	}
	if f.FileSize > limit {
		return demiurge.InboundAttachment{}, &TooLargeError{Size: f.FileSize, Max: limit}
	}
	chat, msgID := strconv.FormatInt(m.Chat.ID, 10), strconv.FormatInt(m.MessageID, 10)
	sum := sha256.Sum256([]byte(cmp.Or(md.ref.FileUniqueID, f.FileUniqueID, md.ref.FileID)))
	digest := hex.EncodeToString(sum[:])[:12]
	dir := filepath.Join(AttachmentDir, safeComponent(chat, "unknown"), safeComponent(msgID, "unknown")+"-"+digest)
	name := attachmentName(md, f.FilePath)

	root, err := os.OpenRoot(c.cfg.AttachmentRoot)
	if err != nil {
		return demiurge.InboundAttachment{}, fmt.Errorf("open the attachment directory: %s", demiurge.IOReason(err))
	}
	defer root.Close()
	if err := root.MkdirAll(dir, 0o700); err != nil {
		return demiurge.InboundAttachment{}, fmt.Errorf("create %s: %s", dir, demiurge.IOReason(err))
	}
	tmp := filepath.Join(dir, ".partial-"+rand.Text()[:12])
	out, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return demiurge.InboundAttachment{}, fmt.Errorf("create %s: %s", tmp, demiurge.IOReason(err))
	}
	n, err := c.api.download(ctx, f.FilePath, out, limit)
	if cerr := out.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("write %s: %s", tmp, demiurge.IOReason(cerr))
	}
	if err == nil {
		if rerr := root.Rename(tmp, filepath.Join(dir, name)); rerr != nil {
			err = fmt.Errorf("store %s: %s", name, demiurge.IOReason(rerr))
		}
	}
	if err != nil {
		_ = root.Remove(tmp)
		return demiurge.InboundAttachment{}, err
	}
	return demiurge.InboundAttachment{
		ID: "telegram:" + chat + ":" + msgID + ":" + digest, Kind: md.kind, Filename: name, MediaType: md.mediaType,
		Path: filepath.Join(c.cfg.AttachmentRoot, dir, name), SizeBytes: n, Source: "telegram",
		Platform: map[string]string{"chat_id": chat, "message_id": msgID, "file_id": md.ref.FileID,
			"file_unique_id": cmp.Or(md.ref.FileUniqueID, f.FileUniqueID), "file_path": f.FilePath, "kind": md.tgKind},
		DurationSeconds: md.ref.Duration, Width: md.ref.Width, Height: md.ref.Height,
	}, nil
}

var unsafeRun = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9._-]+`) })

// safeComponent is s as one path component: runs of other characters than
// letters, digits, '.', '_' and '-' become '_', leading and trailing '.'
// and '_' go; empty becomes fallback.
func safeComponent(s, fallback string) string {
	s = strings.Trim(unsafeRun().ReplaceAllString(s, "_"), "._")
	if s == "" {
		return fallback
	}
	return s
}

// extensions are the file name suffixes of the media types a name without
// one gets.
var extensions = map[string]string{
	"image/jpeg": ".jpg", "image/png": ".png", "image/gif": ".gif", "image/webp": ".webp",
	"audio/ogg": ".ogg", "audio/mpeg": ".mp3", "audio/mp4": ".m4a", "video/mp4": ".mp4",
	"application/pdf": ".pdf", "text/plain": ".txt", "application/zip": ".zip",
}

// attachmentName is the stored file's name: the base of the file's
// Telegram name or of its file_path, made safe, with an extension from its
// media type (or kind) when it has none.
func attachmentName(md media, filePath string) string {
	base := md.ref.FileName
	if base == "" {
		base = filePath
	}
	name := safeComponent(path.Base(strings.ReplaceAll(base, `\`, "/")), "attachment")
	if path.Ext(name) == "" {
		ext, ok := extensions[md.mediaType]
		if !ok {
			ext = map[string]string{demiurge.AttachmentImage: ".jpg", demiurge.AttachmentAudio: ".ogg", demiurge.AttachmentVideo: ".mp4"}[md.kind]
		}
		name += cmp.Or(ext, ".bin")
	}
	return name
}

// attachmentRefused is the reply (exact, spec surfaces §3.8.6) to a
// message whose only content was a file that could not be stored; why is
// in the log and the inbound's metadata.
const attachmentRefused = "Telegram attachment could not be downloaded."
