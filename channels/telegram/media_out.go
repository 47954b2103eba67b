package telegram

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/demiurge/demiurge"
)

// Telegram's bounds on what a bot sends: a caption's length (UTF-16 code
// units), a photo's and any file's size.
const (
	CaptionLimit   = 1024
	MaxPhotoUpload = 10 << 20
	MaxFileUpload  = 50 << 20
)

// hasMedia reports whether blocks hold a block that is not text.
func hasMedia(blocks []demiurge.DeliveryBlock) bool {
	for _, b := range blocks {
		switch b.Type {
		case demiurge.BlockImage, demiurge.BlockAudio, demiurge.BlockVideo, demiurge.BlockFile:
			return true
		}
	}
	return false
}

// sendBlocks sends a delivery with media block by block, in order: text
// as messages, an image with sendPhoto, any other file with sendDocument.
// A media block that cannot be sent is replaced by a text fallback
// (its caption and "[<kind> not sent: <name>]"), all of them in one
// message after the others, and the delivery then fails with the first
// reason (never as a transient failure: what was sent is not sent
// again). Only a transient failure before anything was sent is returned
// as such, so the outbox may try the whole delivery again.
func (c *Channel) sendBlocks(ctx context.Context, chatID, replyTo int64, out demiurge.Outbound) error {
	mdv2 := c.cfg.MessageFormat == "markdown_v2"
	sent := false
	var fallbacks []string
	var failure error
	for _, b := range out.Blocks {
		reply := replyTo
		if sent && c.cfg.ReplyToMode == "first" {
			reply = 0
		}
		switch b.Type {
		case demiurge.BlockText:
			if strings.TrimSpace(b.Text) == "" {
				continue
			}
			if _, err := c.sendText(ctx, chatID, b.Text, reply, "", mdv2); err != nil {
				return c.afterSent(err, sent)
			}
			sent = true
		case demiurge.BlockImage, demiurge.BlockAudio, demiurge.BlockVideo, demiurge.BlockFile:
			err := c.sendMedia(ctx, chatID, reply, out.SessionID, b, mdv2)
			if err == nil {
				sent = true
				continue
			}
			if !sent && transient(err) {
				return coded(err)
			}
			c.cfg.Logger.Warn("telegram media not sent", "channel", c.cfg.Name, "delivery_id", out.DeliveryID,
				"type", b.Type, "err", c.redact(err.Error()))
			fallbacks = append(fallbacks, mediaFallback(b))
			if failure == nil {
				failure = err
			}
		}
	}
	if len(fallbacks) > 0 {
		reply := replyTo
		if sent && c.cfg.ReplyToMode == "first" {
			reply = 0
		}
		if _, err := c.sendText(ctx, chatID, strings.Join(fallbacks, "\n\n"), reply, "", mdv2); err != nil {
			return c.afterSent(err, sent)
		}
		return c.afterSent(failure, true)
	}
	return nil
}

// afterSent codes err for the delivery runtime; once part of the delivery
// was sent, never as a transient failure.
func (c *Channel) afterSent(err error, sent bool) error {
	err = coded(err)
	if sent && transient(err) {
		return demiurge.WrapError(demiurge.EINTERNAL, err, "%s (part of the delivery was sent)", c.redact(demiurge.ErrorMessage(err)))
	}
	return err
}

func transient(err error) bool {
	switch demiurge.ErrorCode(coded(err)) {
	case demiurge.EUNAVAILABLE, demiurge.ETIMEOUT:
		return true
	}
	return false
}

func (c *Channel) redact(s string) string { return strings.ReplaceAll(s, c.cfg.Token, "[REDACTED]") }

// mediaFallback is the text that stands for a media block not sent.
func mediaFallback(b demiurge.DeliveryBlock) string {
	name := b.URI
	if !isURL(name) {
		name = filepath.Base(name)
	}
	line := fmt.Sprintf("[%s not sent: %s]", b.Type, name)
	if c := strings.TrimSpace(b.Caption); c != "" {
		return c + "\n" + line
	}
	return line
}

func isURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != ""
}

// sendMethod is the Bot API method and file field of a media block: an
// image with sendPhoto, an MP4 video with sendVideo, OGG audio with
// sendVoice, MP3 or M4A audio with sendAudio (the formats Telegram plays
// there), anything else with sendDocument. The media type is the block's,
// else the one its name suggests.
func sendMethod(b demiurge.DeliveryBlock) (method, field string) {
	mt, _, _ := strings.Cut(contentType(b.MediaType, path.Base(b.URI)), ";")
	switch {
	case b.Type == demiurge.BlockImage:
		return "sendPhoto", "photo"
	case b.Type == demiurge.BlockVideo && mt == "video/mp4":
		return "sendVideo", "video"
	case b.Type == demiurge.BlockAudio && (mt == "audio/ogg" || mt == "audio/opus"):
		return "sendVoice", "voice"
	case b.Type == demiurge.BlockAudio && (mt == "audio/mpeg" || mt == "audio/mp4" || mt == "audio/x-m4a"):
		return "sendAudio", "audio"
	}
	return "sendDocument", "document"
}

// sendMedia sends one media block with its sendMethod (an image over
// MaxPhotoUpload as a document). A URL
// is handed to Telegram as it is; a local file is opened through
// Config.OpenUpload (which refuses what the turn may not read) and
// uploaded as multipart/form-data. The caption is formatted like a
// message (MarkdownV2 or plain); one Telegram cannot parse is sent again
// plain, and one over CaptionLimit follows the file as a message.
func (c *Channel) sendMedia(ctx context.Context, chatID, replyTo int64, sessionID string, b demiurge.DeliveryBlock, mdv2 bool) error {
	method, field := sendMethod(b)
	params := url.Values{"chat_id": {strconv.FormatInt(chatID, 10)}}
	if replyTo != 0 && c.cfg.ReplyToMode != "off" {
		params.Set("reply_to_message_id", strconv.FormatInt(replyTo, 10))
	}
	caption := strings.TrimSpace(cmp.Or(b.Caption, b.Text))
	longCaption := false
	if caption != "" {
		text := caption
		if mdv2 {
			text = FormatMarkdownV2(caption)
			params.Set("parse_mode", "MarkdownV2")
		}
		if units(text) <= CaptionLimit {
			params.Set("caption", text)
		} else {
			params.Del("parse_mode")
			longCaption = true
		}
	}
	var send func(url.Values) error
	switch {
	case isURL(b.URI):
		send = func(p url.Values) error {
			p.Set(field, b.URI)
			return c.api.call(ctx, method, p, nil)
		}
	case filepath.IsAbs(b.URI):
		if c.cfg.OpenUpload == nil {
			return demiurge.Errorf(demiurge.EUNAUTHORIZED, "telegram channel %s sends no local files", c.cfg.Name)
		}
		f, size, err := c.openUpload(sessionID, b.URI)
		if err != nil {
			return err
		}
		if method == "sendPhoto" && size > MaxPhotoUpload {
			// Telegram takes larger images as documents only.
			method, field = "sendDocument", "document"
		}
		name := filepath.Base(b.URI)
		opened := f
		up := upload{field: field, filename: name, contentType: contentType(b.MediaType, name), open: func() (io.ReadCloser, error) {
			if opened != nil {
				r := opened
				opened = nil
				return r, nil
			}
			// A second attempt reads the file again, checked again.
			f, _, err := c.openUpload(sessionID, b.URI)
			return f, err
		}}
		defer func() {
			if opened != nil {
				opened.Close()
			}
		}()
		send = func(p url.Values) error { return c.api.upload(ctx, method, p, up, nil) }
	default:
		return demiurge.Errorf(demiurge.EINVALID, "a %s block's source is neither a URL nor an absolute path", b.Type)
	}
	err := send(params)
	var api *APIError
	if err != nil && params.Get("parse_mode") != "" && errors.As(err, &api) && api.Code == http.StatusBadRequest && parseError(api.Description) {
		params.Del("parse_mode")
		params.Set("caption", stripMDV2(params.Get("caption")))
		err = send(params)
	}
	if err != nil {
		return err
	}
	if longCaption {
		_, err = c.sendText(ctx, chatID, caption, 0, "", mdv2)
	}
	return err
}

// openUpload opens the local file path through the Host's opener and
// checks that it is a regular file Telegram takes; it returns its size.
func (c *Channel) openUpload(sessionID, path string) (*os.File, int64, error) {
	f, err := c.cfg.OpenUpload(sessionID, path)
	if err != nil {
		return nil, 0, err
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, 0, demiurge.Errorf(demiurge.EINVALID, "%s is not a regular file", path)
	}
	if fi.Size() > MaxFileUpload {
		f.Close()
		return nil, 0, demiurge.Errorf(demiurge.EINVALID, "%s is too large to send on Telegram (%d bytes, max %d)", filepath.Base(path), fi.Size(), MaxFileUpload)
	}
	return f, fi.Size(), nil
}
