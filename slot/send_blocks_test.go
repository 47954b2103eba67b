package slot_test

import (
	"reflect"
	"testing"

	"github.com/demiurge/demiurge"
)

// ctx.output.send, the original's block-level delivery: a string, block
// dicts (text, media with an artifact, control) or a list of them, of
// kind message, progress or notice.
func TestOutputSendBlocks(t *testing.T) {
	res := runOutput(t, outputEnv(t), spec(t, demiurge.PhaseOutput, "", outSerial, "send_blocks"))
	want := []demiurge.SlotIntent{
		{Kind: demiurge.DeliveryKindMessage, Visible: true, HistoryPolicy: demiurge.HistoryPersist, HistoryText: "one string",
			Blocks: []demiurge.SlotBlock{{Type: demiurge.BlockText, Text: "one string"}}},
		{Kind: demiurge.DeliveryKindMessage, Visible: true, HistoryPolicy: demiurge.HistoryPersist, HistoryText: "H", Blocks: []demiurge.SlotBlock{
			{Type: demiurge.BlockText, Text: "a"}, {Type: demiurge.BlockText, Text: "b"},
			{Type: demiurge.BlockImage, Caption: "cap", Source: "https://example.com/i.png", MediaType: "image/png"}}},
		{Kind: demiurge.DeliveryKindProgress, Visible: true, HistoryPolicy: demiurge.HistoryTransient, Metadata: map[string]any{"m": int64(1)},
			Blocks: []demiurge.SlotBlock{{Type: demiurge.BlockControl, Metadata: map[string]any{"typing": true}}}},
	}
	if len(res.Intents) != len(want) {
		t.Fatalf("%d intents, want %d: %+v", len(res.Intents), len(want), res.Intents)
	}
	for i, got := range res.Intents {
		got.SlotID, got.DeliveryID = "", ""
		if !reflect.DeepEqual(got, want[i]) {
			t.Errorf("intent %d=%+v\nwant      %+v", i, got, want[i])
		}
	}
}

func TestOutputSendBlocksErrors(t *testing.T) {
	tests := []struct{ fn, marker, msg string }{
		{"send_bad_kind", "send-kind", "invalid delivery kind: shout"},
		{"send_bad_type", "send-type", "invalid delivery block type: sticker"},
		{"send_bad_block", "send-block", "invalid delivery block: int"},
		{"send_media_history", "send-media-history", "non-text send_* with write_history=True requires history_text"},
	}
	for _, tt := range tests {
		t.Run(tt.fn, func(t *testing.T) {
			res := runOutput(t, outputEnv(t), spec(t, demiurge.PhaseOutput, "", outSerial, tt.fn))
			if got, want := failure(t, res.Events, tt.fn), at(t, outSerial, tt.marker)+tt.msg; got != want {
				t.Fatalf("error=%q\nwant  %q", got, want)
			}
		})
	}
}
