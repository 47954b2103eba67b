package store_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/store"
)

// An inbound's attachment references are committed with it and come back
// with every read (a claim after a crash sees them); a bad reference
// commits nothing.
func TestInboundAttachmentsPersist(t *testing.T) {
	db := demiurgetest.MustOpenDB(t)
	ctx := context.Background()
	att := demiurge.InboundAttachment{ID: "telegram:42:7:abc", Kind: demiurge.AttachmentImage, Filename: "photo.jpg",
		MediaType: "image/jpeg", Path: "/ws/.demiurge-telegram/42/7-abc/photo.jpg", SizeBytes: 3, Source: "telegram",
		Platform: map[string]string{"file_id": "F1", "message_id": "7"}, Width: 640, Height: 480}
	e := envelope("m1", "telegram:dm:42", "[telegram attachment]")
	e.Attachments = []demiurge.InboundAttachment{att}
	rs, err := db.AcceptInbound(ctx, []demiurge.InboundEnvelope{e, envelope("m2", "telegram:dm:43", "plain")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	in, err := db.Inbound(ctx, rs[0].InboundID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in.Attachments, e.Attachments) {
		t.Fatalf("attachments %+v, want %+v", in.Attachments, e.Attachments)
	}
	self := startHost(t, db, store.HostInfo{})
	claimed, err := db.ClaimInbounds(ctx, self.ID(), 10, nil)
	if err != nil || len(claimed) != 2 {
		t.Fatalf("claimed %v, %v", inboundIDs(claimed), err)
	}
	for _, c := range claimed {
		if want := c.ID == rs[0].InboundID; (len(c.Attachments) == 1) != want {
			t.Fatalf("claimed %s with attachments %+v", c.ID, c.Attachments)
		}
	}

	for _, bad := range []demiurge.InboundAttachment{
		{ID: "x", Kind: "sticker", Path: "/a"},
		{ID: "x", Kind: demiurge.AttachmentDocument, Path: "relative/a"},
		{Kind: demiurge.AttachmentDocument, Path: "/a"},
	} {
		e := envelope("m3", "telegram:dm:44", "x")
		e.Attachments = []demiurge.InboundAttachment{bad}
		if _, err := db.AcceptInbound(ctx, []demiurge.InboundEnvelope{e}, nil); demiurge.ErrorCode(err) != demiurge.EINVALID {
			t.Fatalf("attachment %+v: %v", bad, err)
		}
	}
	if all, _ := db.Inbounds(ctx, store.InboundFilter{}); len(all) != 2 {
		t.Fatalf("%d inbounds, want 2", len(all))
	}
}
