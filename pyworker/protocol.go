package pyworker

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// MaxLine bounds one protocol line from the worker. A longer line is a
// protocol violation: the worker is killed.
const MaxLine = 16 << 20

// message is one protocol line, either direction.
type message struct {
	ID     any             `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *wireError      `json:"error,omitempty"`

	// The worker's first line.
	Ready      bool   `json:"ready,omitempty"`
	Python     string `json:"python,omitempty"`
	Executable string `json:"executable,omitempty"`
}

// wireError is an error carried by a reply: type is a Python exception
// class name, where "<file>:<line>" inside the core ("" when unknown).
type wireError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
	Where   string `json:"where,omitempty"`
}

var errMalformed = errors.New("malformed protocol line")

// lineReader reads protocol lines of at most MaxLine bytes.
type lineReader struct{ r *bufio.Reader }

func newLineReader(r io.Reader) *lineReader { return &lineReader{r: bufio.NewReaderSize(r, 64<<10)} }

// next returns the next decoded line. io.EOF when the stream ended,
// errMalformed for a line that is too long or not a JSON object.
func (l *lineReader) next() (message, error) {
	var buf []byte
	for {
		chunk, err := l.r.ReadSlice('\n')
		buf = append(buf, chunk...)
		if len(buf) > MaxLine {
			return message{}, errMalformed
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			if len(buf) > 0 && err == io.EOF {
				return message{}, errMalformed // a torn last line
			}
			return message{}, err
		}
		break
	}
	var m message
	dec := json.NewDecoder(bytes.NewReader(buf))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return message{}, errMalformed
	}
	return m, nil
}

// decodeParams decodes params keeping numbers exact (json.Number).
func decodeParams(raw json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return dec.Decode(v)
}
