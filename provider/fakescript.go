package provider

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/demiurge/demiurge"
)

// maxFakeScript bounds a fake script file.
const maxFakeScript = 16 << 20

// LoadFakeScript reads a fake provider script (--fake-script): a JSON list, or an
// object {"responses": [...]}, of items {"content"?: string, "tool_calls"?:
// [{"id"?: string, "name": string, "arguments"?: object}], "usage"?:
// {"input_tokens"?: int, "output_tokens"?: int}} (usage: what the call
// reports it cost). Decoding is
// strict: an unknown key, a wrong type or a missing tool name is an ECONFIG
// error naming the file and the item (responses[i], counted from 0). A tool
// call without id gets fake_tool_call_<n>, n counted from 1 within its item.
func LoadFakeScript(path string) ([]demiurge.ModelResponse, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, demiurge.WrapError(demiurge.ECONFIG, err, "fake script %s: file not found", path)
		}
		return nil, demiurge.WrapError(demiurge.ECONFIG, err, "fake script %s: cannot read: %s", path, demiurge.IOReason(err))
	}
	if len(data) > maxFakeScript {
		return nil, demiurge.Errorf(demiurge.ECONFIG, "fake script %s: larger than %d MiB", path, maxFakeScript>>20)
	}
	return parseFakeScript(path, data)
}

func parseFakeScript(path string, data []byte) ([]demiurge.ModelResponse, error) {
	fail := func(format string, args ...any) error {
		return demiurge.Errorf(demiurge.ECONFIG, "fake script %s: %s", path, fmt.Sprintf(format, args...))
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fail(`empty file (want a JSON list or {"responses": [...]})`)
	}
	var top json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line, col := position(data, se.Offset)
			return nil, fail("line %d, column %d: %v", line, col, err)
		}
		return nil, fail("%v", err)
	}
	var items []json.RawMessage
	switch top[0] {
	case '[':
		if err := json.Unmarshal(top, &items); err != nil {
			return nil, fail("%v", err)
		}
	case '{':
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(top, &obj); err != nil {
			return nil, fail("%v", err)
		}
		if extra := unknownKeys(obj, "responses"); extra != "" {
			return nil, fail("unknown top-level key(s) %s (want a JSON list or {\"responses\": [...]})", extra)
		}
		r, ok := obj["responses"]
		if !ok {
			return nil, fail(`missing "responses" (want a JSON list or {"responses": [...]})`)
		}
		if err := json.Unmarshal(r, &items); err != nil || !isList(r) {
			return nil, fail(`"responses" must be a JSON list`)
		}
	default:
		return nil, fail(`want a JSON list or {"responses": [...]}`)
	}

	out := make([]demiurge.ModelResponse, 0, len(items))
	for i, raw := range items {
		resp, err := fakeItem(raw)
		if err != nil {
			return nil, fail("responses[%d]%s", i, err.Error())
		}
		out = append(out, resp)
	}
	return out, nil
}

// fakeItem decodes one script item. Its errors start with the path inside
// the item (".tool_calls[0].name: …") or ": " for the item itself.
func fakeItem(raw json.RawMessage) (demiurge.ModelResponse, error) {
	var resp demiurge.ModelResponse
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil || fields == nil {
		return resp, errors.New(": want an object {\"content\"?, \"tool_calls\"?, \"usage\"?}")
	}
	if extra := unknownKeys(fields, "content", "tool_calls", "usage"); extra != "" {
		return resp, fmt.Errorf(": unknown key(s) %s (allowed: content, tool_calls, usage)", extra)
	}
	if u, ok := fields["usage"]; ok && !isNull(u) {
		if err := fakeUsage(u, &resp.Usage); err != nil {
			return resp, err
		}
	}
	if c, ok := fields["content"]; ok && !isNull(c) {
		if err := json.Unmarshal(c, &resp.Content); err != nil {
			return resp, errors.New(".content: want a string")
		}
	}
	tcRaw, ok := fields["tool_calls"]
	if !ok || isNull(tcRaw) {
		return resp, nil
	}
	var calls []json.RawMessage
	if !isList(tcRaw) || json.Unmarshal(tcRaw, &calls) != nil {
		return resp, errors.New(".tool_calls: want a list")
	}
	for j, c := range calls {
		tc, err := fakeToolCall(c, j)
		if err != nil {
			return resp, fmt.Errorf(".tool_calls[%d]%s", j, err.Error())
		}
		resp.ToolCalls = append(resp.ToolCalls, tc)
	}
	return resp, nil
}

// fakeUsage reads an item's {"input_tokens"?, "output_tokens"?}: what the
// scripted call reports it cost.
func fakeUsage(raw json.RawMessage, u *demiurge.Usage) error {
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil || fields == nil {
		return errors.New(".usage: want an object {\"input_tokens\"?, \"output_tokens\"?}")
	}
	if extra := unknownKeys(fields, "input_tokens", "output_tokens"); extra != "" {
		return fmt.Errorf(".usage: unknown key(s) %s (allowed: input_tokens, output_tokens)", extra)
	}
	for key, dst := range map[string]*int64{"input_tokens": &u.InputTokens, "output_tokens": &u.OutputTokens} {
		if v, ok := fields[key]; ok && !isNull(v) {
			if json.Unmarshal(v, dst) != nil || *dst < 0 {
				return fmt.Errorf(".usage.%s: want a non-negative integer", key)
			}
		}
	}
	return nil
}

func fakeToolCall(raw json.RawMessage, j int) (demiurge.ToolCall, error) {
	var tc demiurge.ToolCall
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil || fields == nil {
		return tc, errors.New(": want an object {\"id\"?, \"name\", \"arguments\"?}")
	}
	if extra := unknownKeys(fields, "id", "name", "arguments"); extra != "" {
		return tc, fmt.Errorf(": unknown key(s) %s (allowed: id, name, arguments)", extra)
	}
	if v, ok := fields["id"]; ok && !isNull(v) {
		if json.Unmarshal(v, &tc.ID) != nil {
			return tc, errors.New(".id: want a string")
		}
	}
	tc.ID = cmp.Or(tc.ID, fmt.Sprintf("fake_tool_call_%d", j+1))
	if v, ok := fields["name"]; !ok || isNull(v) {
		return tc, errors.New(".name: required")
	} else if json.Unmarshal(v, &tc.Name) != nil {
		return tc, errors.New(".name: want a string")
	}
	if strings.TrimSpace(tc.Name) == "" {
		return tc, errors.New(".name: must not be empty")
	}
	tc.Arguments = map[string]any{}
	if v, ok := fields["arguments"]; ok && !isNull(v) {
		if v[0] != '{' || json.Unmarshal(v, &tc.Arguments) != nil {
			return tc, errors.New(".arguments: want an object")
		}
	}
	return tc, nil
}

// unknownKeys lists, sorted and quoted, the keys of m not in allowed.
func unknownKeys(m map[string]json.RawMessage, allowed ...string) string {
	var extra []string
	for k := range m {
		if !slices.Contains(allowed, k) {
			extra = append(extra, fmt.Sprintf("%q", k))
		}
	}
	slices.Sort(extra)
	return strings.Join(extra, ", ")
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

func isList(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '['
}

// position turns a byte offset into a 1-based line and column.
func position(data []byte, offset int64) (line, col int) {
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	before := data[:offset]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(offset) - (bytes.LastIndexByte(before, '\n') + 1)
	return line, max(col, 1)
}
