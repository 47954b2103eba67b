package provider

import (
	"bufio"
	"errors"
	"io"
	"strings"
)

// Limits of the SSE reader. Provider events are small (a delta each); the
// limits stop a broken or hostile server from growing memory without bound.
const (
	maxSSELine = 1 << 20  // one line
	maxSSEData = 16 << 20 // the data of one event
)

var (
	errSSELineTooLong = errors.New("stream line exceeds 1 MiB")
	errSSEDataTooLong = errors.New("stream event exceeds 16 MiB")
)

// sseEvent is one dispatched server-sent event.
type sseEvent struct {
	Event string // the "event:" field; "" when absent
	Data  string // the "data:" lines joined with "\n"
	ID    string // the "id:" field of this event; "" when absent
}

// sseReader parses a text/event-stream as the WHATWG spec describes (lines
// end in CRLF, LF or CR; ":" starts a comment; one space after the colon is
// dropped; data lines join with "\n"; a blank line dispatches; an event with
// no data line is not dispatched). It is lenient at the end: an event cut off
// by EOF without its blank line is still dispatched, because some servers
// close right after the last data line.
type sseReader struct {
	r       *bufio.Reader
	maxLine int  // bytes of one line (maxSSELine; smaller in tests)
	maxData int  // bytes of one event's data (maxSSEData; smaller in tests)
	started bool // the leading byte-order mark was checked
	skipLF  bool // the previous line ended in CR: a following LF belongs to it
	line    []byte
}

func newSSEReader(r io.Reader) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(r, 16<<10), maxLine: maxSSELine, maxData: maxSSEData}
}

// next returns the next event, or io.EOF after the last one, or the read
// error that ended the stream.
func (s *sseReader) next() (sseEvent, error) {
	var (
		ev      sseEvent
		data    strings.Builder
		hasData bool
	)
	for {
		line, err := s.readLine()
		if err != nil && (err != io.EOF || line == nil) {
			if err == io.EOF && hasData {
				ev.Data = strings.TrimSuffix(data.String(), "\n")
				return ev, nil
			}
			return sseEvent{}, err
		}
		if len(line) == 0 {
			if hasData {
				ev.Data = strings.TrimSuffix(data.String(), "\n")
				return ev, nil
			}
			ev = sseEvent{}
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value := string(line), ""
		if i := strings.IndexByte(field, ':'); i >= 0 {
			field, value = field[:i], field[i+1:]
			value = strings.TrimPrefix(value, " ")
		}
		switch field {
		case "event":
			ev.Event = value
		case "data":
			if data.Len()+len(value)+1 > s.maxData {
				return sseEvent{}, errSSEDataTooLong
			}
			data.WriteString(value)
			data.WriteByte('\n')
			hasData = true
		case "id":
			if !strings.ContainsRune(value, 0) {
				ev.ID = value
			}
		}
	}
}

// readLine returns one line without its terminator. At the end of the input
// it returns the unterminated rest (non-nil, possibly empty only if a partial
// line existed) together with io.EOF, or nil and io.EOF when nothing is left.
func (s *sseReader) readLine() ([]byte, error) {
	s.line = s.line[:0]
	got := false
	for {
		c, err := s.r.ReadByte()
		if err != nil {
			if got {
				return s.line, io.EOF
			}
			return nil, err
		}
		if !s.started {
			s.started = true
			if c == 0xEF {
				if bom, perr := s.r.Peek(2); perr == nil && bom[0] == 0xBB && bom[1] == 0xBF {
					_, _ = s.r.Discard(2)
					continue
				}
			}
		}
		if s.skipLF {
			s.skipLF = false
			if c == '\n' {
				continue
			}
		}
		switch c {
		case '\n':
			return s.line, nil
		case '\r':
			s.skipLF = true
			return s.line, nil
		}
		if len(s.line) >= s.maxLine {
			return nil, errSSELineTooLong
		}
		s.line = append(s.line, c)
		got = true
	}
}
