package store_test

import (
	"context"
	"path/filepath"
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

// An attachments column that cannot be read (a hand edit, a disk fault)
// does not stop the inbox: the inbound is claimed with its text, and the
// raw column is kept aside in its metadata.
func TestInboundCorruptAttachmentsDoNotStopClaims(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	ctx := context.Background()
	db, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	self := startHost(t, db, store.HostInfo{})
	e := envelope("m1", "conv-a", "look")
	e.Attachments = []demiurge.InboundAttachment{{ID: "a", Kind: demiurge.AttachmentDocument, Filename: "a.txt",
		MediaType: "text/plain", Path: "/ws/a.txt", SizeBytes: 1, Source: "telegram"}}
	rs, err := db.AcceptInbound(ctx, []demiurge.InboundEnvelope{e, envelope("m2", "conv-b", "plain")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rawDB(t, path).Exec(`UPDATE channel_inbox SET attachments_json = '[{"id":' WHERE inbound_id = ?`, rs[0].InboundID); err != nil {
		t.Fatal(err)
	}
	claimed, err := db.ClaimInbounds(ctx, self.ID(), 10, nil)
	if err != nil || len(claimed) != 2 {
		t.Fatalf("claimed %d inbounds (%v), want both", len(claimed), err)
	}
	got := claimed[0]
	if got.ID != rs[0].InboundID || got.Text != "look" || len(got.Attachments) != 0 || got.Metadata["_corrupt_attachments_json"] != `[{"id":` {
		t.Fatalf("inbound %+v", got)
	}
}
