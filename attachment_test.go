package demiurge_test

import (
	"reflect"
	"testing"

	"github.com/demiurge/demiurge"
)

// The descriptor is the spec's ctx.input.attachments shape: the platform's
// facts under the source's name, optional sizes only when known.
func TestInboundAttachmentDescriptor(t *testing.T) {
	a := demiurge.InboundAttachment{ID: "telegram:42:7:abc", Kind: demiurge.AttachmentImage, Filename: "p.jpg",
		MediaType: "image/jpeg", Path: "/ws/p.jpg", SizeBytes: 3, Source: "telegram",
		Platform: map[string]string{"file_id": "F"}, Width: 10}
	want := map[string]any{"id": "telegram:42:7:abc", "kind": "image", "filename": "p.jpg", "media_type": "image/jpeg",
		"path": "/ws/p.jpg", "size_bytes": int64(3), "source": "telegram", "telegram": map[string]any{"file_id": "F"}, "width": 10}
	if got := a.Descriptor(); !reflect.DeepEqual(got, want) {
		t.Fatalf("descriptor %v, want %v", got, want)
	}
	many := make([]demiurge.InboundAttachment, demiurge.MaxInboundAttachments+1)
	for i := range many {
		many[i] = a
	}
	if err := demiurge.ValidateAttachments(many); demiurge.ErrorCode(err) != demiurge.EINVALID {
		t.Fatalf("too many attachments: %v", err)
	}
	if err := demiurge.ValidateAttachments(many[:2]); err != nil {
		t.Fatal(err)
	}
}
