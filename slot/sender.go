package slot

import (
	"fmt"

	sl "go.starlark.net/starlark"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/starlark"
)

// MaxIntentsPerInvocation bounds the deliveries one slot invocation may ask
// for: each becomes an outbox row, so a looping slot must not flood it.
const MaxIntentsPerInvocation = 256

// sender implements send_text, send_image/audio/video/file, progress,
// notice and send (send_blocks.go) for one slot invocation. It is used by the invocation's thread only.
type sender struct {
	slotID      string
	rule        historyRule
	workspace   string
	sessionRoot string
	intents     []demiurge.SlotIntent
}

// members returns the send built-ins, shared by ctx.input and ctx.output.
func (s *sender) members() sl.StringDict {
	return sl.StringDict{
		"send_text":  sl.NewBuiltin("send_text", s.sendText),
		"send_image": sl.NewBuiltin("send_image", s.sendMedia(demiurge.BlockImage)),
		"send_audio": sl.NewBuiltin("send_audio", s.sendMedia(demiurge.BlockAudio)),
		"send_video": sl.NewBuiltin("send_video", s.sendMedia(demiurge.BlockVideo)),
		"send_file":  sl.NewBuiltin("send_file", s.sendMedia(demiurge.BlockFile)),
		"progress":   sl.NewBuiltin("progress", s.sendStatus(demiurge.DeliveryKindProgress)),
		"notice":     sl.NewBuiltin("notice", s.sendStatus(demiurge.DeliveryKindNotice)),
		"send":       sl.NewBuiltin("send", s.sendBlocks),
	}
}

// controls are the history and delivery arguments every send_* accepts.
type controls struct {
	write       optBool
	policy      optString
	visible     bool
	historyText optString
	failureText optString
	metadata    sl.Value
}

func (c *controls) pairs() []any {
	c.visible = true
	return []any{
		"write_history??", &c.write,
		"history_policy??", &c.policy,
		"visible?", &c.visible,
		"history_text??", &c.historyText,
		"failure_history_text??", &c.failureText,
		"delivery_metadata??", &c.metadata,
	}
}

func (s *sender) sendText(_ *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	var text string
	var c controls
	if err := sl.UnpackArgs(b.Name(), args, kwargs, append([]any{"text", &text}, c.pairs()...)...); err != nil {
		return nil, err
	}
	in := demiurge.SlotIntent{Kind: demiurge.DeliveryKindMessage, Blocks: []demiurge.SlotBlock{{Type: demiurge.BlockText, Text: text}}, HistoryText: text}
	return s.record(b.Name(), in, c, false)
}

func (s *sender) sendMedia(kind string) func(*sl.Thread, *sl.Builtin, sl.Tuple, []sl.Tuple) (sl.Value, error) {
	return func(_ *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
		var source, artifactMeta sl.Value
		var caption, mediaType, summary optString
		var c controls
		pairs := append([]any{
			"source", &source,
			"caption??", &caption,
			"media_type??", &mediaType,
			"summary??", &summary,
			"artifact_metadata??", &artifactMeta,
		}, c.pairs()...)
		if err := sl.UnpackArgs(b.Name(), args, kwargs, pairs...); err != nil {
			return nil, err
		}
		src, err := s.artifactSource(kind, source)
		if err != nil {
			return nil, err
		}
		meta, err := jsonObject(b.Name(), "artifact_metadata", artifactMeta)
		if err != nil {
			return nil, err
		}
		block := demiurge.SlotBlock{Type: kind, Source: src, Caption: caption.val, MediaType: mediaType.val, Summary: summary.val, Metadata: meta}
		return s.record(b.Name(), demiurge.SlotIntent{Kind: demiurge.DeliveryKindMessage, Blocks: []demiurge.SlotBlock{block}}, c, true)
	}
}

// sendStatus implements progress and notice: always transient.
func (s *sender) sendStatus(kind string) func(*sl.Thread, *sl.Builtin, sl.Tuple, []sl.Tuple) (sl.Value, error) {
	return func(_ *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
		var text string
		c := controls{visible: true, write: optBool{set: true, val: false}}
		if err := sl.UnpackArgs(b.Name(), args, kwargs, "text", &text, "visible?", &c.visible, "delivery_metadata??", &c.metadata); err != nil {
			return nil, err
		}
		return s.record(b.Name(), demiurge.SlotIntent{Kind: kind, Blocks: []demiurge.SlotBlock{{Type: demiurge.BlockText, Text: text}}}, c, false)
	}
}

// record resolves the history policy, checks the delivery and appends it.
func (s *sender) record(fn string, in demiurge.SlotIntent, c controls, media bool) (sl.Value, error) {
	policy, err := s.rule.resolve(c.policy, c.write, c.visible)
	if err != nil {
		return nil, err
	}
	if c.historyText.set {
		in.HistoryText = c.historyText.val
	}
	if media && policy != demiurge.HistoryTransient && !c.historyText.set {
		return nil, fmt.Errorf("non-text send_* with write_history=True requires history_text")
	}
	meta, err := jsonObject(fn, "delivery_metadata", c.metadata)
	if err != nil {
		return nil, err
	}
	if len(s.intents) >= MaxIntentsPerInvocation {
		return nil, fmt.Errorf("%s: a slot invocation may send at most %d deliveries", fn, MaxIntentsPerInvocation)
	}
	in.DeliveryID = demiurge.NewID("delivery")
	in.Visible = c.visible
	in.HistoryPolicy = policy
	in.FailureHistoryText = c.failureText.val
	in.Metadata = meta
	in.SlotID = s.slotID
	s.intents = append(s.intents, in)
	return starlark.NewObject("delivery", sl.StringDict{"delivery_id": sl.String(in.DeliveryID)}), nil
}

// artifactSource checks a media source: an http(s) URL, or a path that
// resolves inside the workspace or the session artifact root.
func (s *sender) artifactSource(kind string, v sl.Value) (string, error) {
	switch v.(type) {
	case sl.IterableMapping, *starlark.Object:
		return "", fmt.Errorf("send_%s source must be a path, URL, or ArtifactRef; pass summary=... and artifact_metadata=... instead of an artifact dict", kind)
	}
	str, ok := v.(sl.String)
	if !ok {
		return "", fmt.Errorf("send_%s source must be a path, URL, or ArtifactRef", kind)
	}
	p := string(str)
	if isURL(p) {
		return p, nil
	}
	abs, ok := containedPath(p, s.workspace, s.sessionRoot)
	if !ok {
		return "", fmt.Errorf("attachment path is outside the workspace or session: %s", p)
	}
	return abs, nil
}

// jsonObject converts an optional dict argument to a JSON object.
func jsonObject(fn, param string, v sl.Value) (map[string]any, error) {
	if v == nil {
		return nil, nil
	}
	if _, ok := v.(*sl.Dict); !ok {
		return nil, fmt.Errorf("%s: %s must be a dict or None, got %s", fn, param, v.Type())
	}
	out, err := starlark.FromStarlark(v)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %v", fn, param, err)
	}
	return out.(map[string]any), nil
}
