package slot

import (
	"fmt"
	"strings"

	sl "go.starlark.net/starlark"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/starlark"
)

// blockTypes are the types a block of ctx.*.send may have.
var blockTypes = map[string]bool{
	demiurge.BlockText: true, demiurge.BlockImage: true, demiurge.BlockAudio: true,
	demiurge.BlockVideo: true, demiurge.BlockFile: true, demiurge.BlockControl: true,
}

// sendBlocks implements send(blocks, kind="message", write_history=None,
// history_policy=None, visible=True, history_text=None,
// failure_history_text=None, metadata=None), the original's lower-level
// delivery: blocks is a string, a block dict ({type, text, artifact,
// metadata}; artifact a dict with path or url, and media_type, summary,
// metadata) or a list of them. The history text defaults to the text
// blocks joined by a blank line; a media block that writes history needs
// history_text, as send_* do.
func (s *sender) sendBlocks(_ *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	var blocks sl.Value
	kind := demiurge.DeliveryKindMessage
	var c controls
	pairs := []any{"blocks", &blocks, "kind?", &kind}
	for _, p := range c.pairs() {
		// The original names this one metadata, not delivery_metadata.
		if p == "delivery_metadata??" {
			p = "metadata??"
		}
		pairs = append(pairs, p)
	}
	if err := sl.UnpackArgs(b.Name(), args, kwargs, pairs...); err != nil {
		return nil, err
	}
	switch kind {
	case demiurge.DeliveryKindMessage, demiurge.DeliveryKindProgress, demiurge.DeliveryKindNotice:
	default:
		return nil, fmt.Errorf("invalid delivery kind: %s", kind)
	}
	var items []sl.Value
	if l, ok := blocks.(*sl.List); ok {
		for i := range l.Len() {
			items = append(items, l.Index(i))
		}
	} else if tu, ok := blocks.(sl.Tuple); ok {
		items = tu
	} else {
		items = []sl.Value{blocks}
	}
	in := demiurge.SlotIntent{Kind: kind}
	var texts []string
	media := false
	for _, item := range items {
		blk, err := s.block(item)
		if err != nil {
			return nil, err
		}
		switch blk.Type {
		case demiurge.BlockText:
			texts = append(texts, blk.Text)
		case demiurge.BlockControl:
		default:
			media = true
		}
		in.Blocks = append(in.Blocks, blk)
	}
	if len(in.Blocks) == 0 {
		return nil, fmt.Errorf("%s: blocks must not be empty", b.Name())
	}
	in.HistoryText = strings.Join(texts, "\n\n")
	if kind != demiurge.DeliveryKindMessage {
		// progress and notice are always transient.
		c.write, c.policy = optBool{set: true, val: false}, optString{}
	}
	return s.record(b.Name(), in, c, media)
}

// block converts one item of send's blocks.
func (s *sender) block(v sl.Value) (demiurge.SlotBlock, error) {
	switch x := v.(type) {
	case sl.String:
		return demiurge.SlotBlock{Type: demiurge.BlockText, Text: string(x)}, nil
	case *sl.Dict:
		raw, err := starlark.FromStarlark(x)
		if err != nil {
			return demiurge.SlotBlock{}, fmt.Errorf("invalid delivery block: %v", err)
		}
		m := raw.(map[string]any)
		for k := range m {
			switch k {
			case "type", "text", "artifact", "metadata":
			default:
				return demiurge.SlotBlock{}, fmt.Errorf("invalid delivery block: unknown key %q", k)
			}
		}
		typ, _ := m["type"].(string)
		if typ == "" {
			typ = demiurge.BlockText
		}
		if !blockTypes[typ] {
			return demiurge.SlotBlock{}, fmt.Errorf("invalid delivery block type: %s", typ)
		}
		text, _ := m["text"].(string)
		meta, _ := m["metadata"].(map[string]any)
		blk := demiurge.SlotBlock{Type: typ, Text: text, Metadata: meta}
		if typ == demiurge.BlockText || typ == demiurge.BlockControl {
			return blk, nil
		}
		art, _ := m["artifact"].(map[string]any)
		src, _ := art["path"].(string)
		if src == "" {
			src, _ = art["url"].(string)
		}
		if src == "" {
			return demiurge.SlotBlock{}, fmt.Errorf("invalid delivery block: a %s block needs an artifact with a path or url", typ)
		}
		abs, err := s.artifactSource(typ, sl.String(src))
		if err != nil {
			return demiurge.SlotBlock{}, err
		}
		blk.Text, blk.Caption, blk.Source = "", text, abs
		blk.MediaType, _ = art["media_type"].(string)
		blk.Summary, _ = art["summary"].(string)
		if am, ok := art["metadata"].(map[string]any); ok {
			blk.Metadata = am
		}
		return blk, nil
	}
	return demiurge.SlotBlock{}, fmt.Errorf("invalid delivery block: %s", v.Type())
}
