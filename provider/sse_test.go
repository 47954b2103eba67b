package provider

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

func parseAll(t testing.TB, in string) ([]sseEvent, error) {
	t.Helper()
	r := newSSEReader(strings.NewReader(in))
	var out []sseEvent
	for {
		ev, err := r.next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, ev)
	}
}

func TestSSEParse(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []sseEvent
	}{
		{"one event", "data: hi\n\n", []sseEvent{{Data: "hi"}}},
		{"named with id", "event: ping\nid: 7\ndata: {}\n\n", []sseEvent{{Event: "ping", ID: "7", Data: "{}"}}},
		{"multi-line data", "data: a\ndata:b\ndata:  c\n\n", []sseEvent{{Data: "a\nb\n c"}}},
		{"CRLF and CR", "data: a\r\n\r\ndata: b\r\rdata: c\n\n", []sseEvent{{Data: "a"}, {Data: "b"}, {Data: "c"}}},
		{"comments and unknown fields", ": hello\nretry: 10\nfoo: bar\ndata: x\n\n", []sseEvent{{Data: "x"}}},
		{"event without data is dropped", "event: lonely\n\ndata: y\n\n", []sseEvent{{Data: "y"}}},
		{"empty data still dispatches", "data\n\ndata:\n\n", []sseEvent{{Data: ""}, {Data: ""}}},
		{"field without colon", "event\ndata: z\n\n", []sseEvent{{Data: "z"}}},
		{"byte-order mark", "\ufeffdata: bom\n\n", []sseEvent{{Data: "bom"}}},
		{"unterminated last event", "data: a\n\ndata: tail", []sseEvent{{Data: "a"}, {Data: "tail"}}},
		{"blank lines only", "\n\n\r\n", nil},
		{"id with NUL ignored", "id: a\x00b\ndata: d\n\n", []sseEvent{{Data: "d"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseAll(t, tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("events = %#v\nwant %#v", got, tt.want)
			}
		})
	}
}

func TestSSELimits(t *testing.T) {
	read := func(in string) error {
		r := newSSEReader(strings.NewReader(in))
		r.maxLine, r.maxData = 64, 100
		for {
			if _, err := r.next(); err != nil {
				return err
			}
		}
	}
	if err := read("data: " + strings.Repeat("x", 58) + "\n\n"); err != io.EOF {
		t.Errorf("line at the limit: err = %v", err)
	}
	if err := read("data: " + strings.Repeat("x", 59) + "\n\n"); !errors.Is(err, errSSELineTooLong) {
		t.Errorf("long line: err = %v", err)
	}
	if err := read(strings.Repeat("data: "+strings.Repeat("x", 40)+"\n", 3) + "\n"); !errors.Is(err, errSSEDataTooLong) {
		t.Errorf("long event: err = %v", err)
	}
	if got := newSSEReader(strings.NewReader("")); got.maxLine != maxSSELine || got.maxData != maxSSEData {
		t.Errorf("default limits = %d, %d", got.maxLine, got.maxData)
	}
}

// encodeSSE writes events back as an event stream.
func encodeSSE(evs []sseEvent) string {
	var b strings.Builder
	for _, ev := range evs {
		if ev.Event != "" {
			b.WriteString("event: " + ev.Event + "\n")
		}
		if ev.ID != "" {
			b.WriteString("id: " + ev.ID + "\n")
		}
		for _, line := range strings.Split(ev.Data, "\n") {
			b.WriteString("data: " + line + "\n")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// FuzzSSE checks that the parser never panics, that what it parses survives
// a round trip through encodeSSE, and that neither stream decoder panics on
// any event sequence. Seeds: testdata/fuzz/FuzzSSE.
func FuzzSSE(f *testing.F) {
	f.Add("data: hi\n\n")
	f.Add("event: message_start\ndata: {\"type\":\"message_start\"}\n\n")
	f.Add("data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\"}}]}}]}\r\n\r\ndata: [DONE]\n\n")
	f.Fuzz(func(t *testing.T, in string) {
		evs, err := parseAll(t, in)
		if err != nil {
			return
		}
		for _, ev := range evs {
			if strings.ContainsAny(ev.Event, "\r\n") || strings.ContainsAny(ev.ID, "\r\n\x00") || strings.ContainsRune(ev.Data, '\r') {
				t.Fatalf("event carries a line break: %#v", ev)
			}
		}
		again, err := parseAll(t, encodeSSE(evs))
		if err != nil {
			t.Fatalf("re-parse: %v", err)
		}
		if len(evs) == 0 {
			evs = nil
		}
		if !reflect.DeepEqual(again, evs) {
			t.Fatalf("round trip:\n%#v\n%#v", evs, again)
		}
		emit := func(string) {}
		oa, an := newOpenAIStream("openai"), newAnthropicStream("anthropic")
		for _, ev := range evs {
			_ = oa.handle(ev, emit)
			_ = an.handle(ev, emit)
		}
		_ = oa.response()
		_ = an.response()
	})
}
