package demiurge

import "path/filepath"

// Attachment kinds: what an inbound file is, as ctx.input.attachments
// names it.
const (
	AttachmentImage    = "image"
	AttachmentAudio    = "audio"
	AttachmentVideo    = "video"
	AttachmentDocument = "document"
)

// MaxInboundAttachments bounds the attachments of one inbound envelope.
const MaxInboundAttachments = 16

// InboundAttachment is a file that arrived with an inbound channel message.
// The channel adapter stores the file where the turn may read it (the
// core's workspace) before it accepts the message, so the reference is
// committed with the inbound and a crash after the accept loses nothing.
// A turn's input slots see Descriptor() in ctx.input.attachments (spec
// surfaces §1.3).
type InboundAttachment struct {
	ID        string `json:"id"`
	Kind      string `json:"kind"` // AttachmentImage, AttachmentAudio, AttachmentVideo or AttachmentDocument
	Filename  string `json:"filename"`
	MediaType string `json:"media_type,omitempty"`
	Path      string `json:"path"` // absolute
	SizeBytes int64  `json:"size_bytes"`
	// Source is the channel type that received it ("telegram"); Platform
	// holds that platform's facts about the file (ids, its path there),
	// shown under the Source key. It never holds credentials.
	Source          string            `json:"source"`
	Platform        map[string]string `json:"platform,omitempty"`
	DurationSeconds int               `json:"duration_seconds,omitempty"`
	Width           int               `json:"width,omitempty"`
	Height          int               `json:"height,omitempty"`
}

// Descriptor is the attachment as ctx.input.attachments shows it: {id,
// kind, filename, media_type, path, size_bytes, source, <source>:
// {platform facts}, duration_seconds?, width?, height?}. Its values are
// JSON-compatible.
func (a InboundAttachment) Descriptor() map[string]any {
	d := map[string]any{"id": a.ID, "kind": a.Kind, "filename": a.Filename, "media_type": a.MediaType,
		"path": a.Path, "size_bytes": a.SizeBytes, "source": a.Source}
	if a.Source != "" && len(a.Platform) > 0 {
		p := make(map[string]any, len(a.Platform))
		for k, v := range a.Platform {
			p[k] = v
		}
		d[a.Source] = p
	}
	for k, v := range map[string]int{"duration_seconds": a.DurationSeconds, "width": a.Width, "height": a.Height} {
		if v > 0 {
			d[k] = v
		}
	}
	return d
}

// Validate checks what the inbox stores of an attachment; errors are
// EINVALID and name the attachment by index i.
func (a InboundAttachment) Validate(i int) error {
	switch {
	case a.ID == "":
		return Errorf(EINVALID, "inbound attachment %d has no id", i)
	case a.Kind != AttachmentImage && a.Kind != AttachmentAudio && a.Kind != AttachmentVideo && a.Kind != AttachmentDocument:
		return Errorf(EINVALID, "inbound attachment %d: kind %q is not image, audio, video or document", i, a.Kind)
	case a.Path == "" || !filepath.IsAbs(a.Path):
		return Errorf(EINVALID, "inbound attachment %d: path %q is not absolute", i, a.Path)
	case a.SizeBytes < 0:
		return Errorf(EINVALID, "inbound attachment %d: negative size", i)
	}
	return nil
}

// ValidateAttachments checks a list of inbound attachments: at most
// MaxInboundAttachments, each valid.
func ValidateAttachments(as []InboundAttachment) error {
	if len(as) > MaxInboundAttachments {
		return Errorf(EINVALID, "an inbound message carries %d attachments, at most %d", len(as), MaxInboundAttachments)
	}
	for i, a := range as {
		if err := a.Validate(i); err != nil {
			return err
		}
	}
	return nil
}
