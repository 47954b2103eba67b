package process

import (
	"io"
	"os"
	"sync"
)

// Read sizes: foreground drains read up to 1 MiB at a time (the pipes are
// grown to 1 MiB where allowed; fewer, larger reads are what makes hundreds
// of MiB cheap); with OnChunk set (background tasks log each chunk) reads
// are 8 KiB so log lines stay small.
const (
	readSize      = 1 << 20
	chunkReadSize = 8 << 10
)

// readBufs recycles the large read buffers between commands.
var readBufs = sync.Pool{New: func() any { return new([]byte) }}

// drain empties one pipe until EOF. Everything read passes through the
// redacting stream first; only redacted bytes reach the tail, the artifact
// and OnChunk. Nothing in the chain can fail back into the read loop, so a
// broken artifact never stops the draining and the command never blocks on
// a full pipe because of it.
type drain struct {
	name    string
	r       *os.File
	size    int
	red     *OutputRedactor
	tail    *tailBuffer
	art     *artifactFile // nil without an artifact root
	onChunk func(stream, text string)
	chunks  chunkText

	// artFailed is signalled (without blocking) when the artifact first
	// fails.
	artFailed chan<- struct{}
}

func newDrain(name string, r *os.File, spec Spec, art *artifactFile, artFailed chan<- struct{}) *drain {
	d := &drain{
		name: name, r: r, size: readSize,
		tail: newTailBuffer(spec.TailChars), art: art,
		onChunk: spec.OnChunk, artFailed: artFailed,
	}
	if d.onChunk != nil {
		d.size = chunkReadSize
	}
	d.red = NewOutputRedactor(sinkFunc(d.sink), spec.Redact, spec.Discover)
	if spec.ArtifactLimit > 0 && art != nil {
		art.limit = spec.ArtifactLimit
	}
	return d
}

// OutputRedactor is the first stage of a drain: every byte a command
// writes passes through it before the tail, the artifact or OnChunk see
// it. It replaces the exact values of Spec.Redact (streamRedactor) and,
// with a discover function (Spec.Discover), what discover finds in the
// output itself from the line it is found in on (discoveringRedactor).
type OutputRedactor struct{ stage redactStage }

// NewOutputRedactor returns the stage writing redacted bytes to out, which
// must not fail; discover may be nil.
func NewOutputRedactor(out io.Writer, known map[string]string, discover func(text string) map[string]string) *OutputRedactor {
	red := newStreamRedactor(out, known)
	if discover == nil {
		return &OutputRedactor{stage: red}
	}
	return &OutputRedactor{stage: newDiscoveringRedactor(red, known, discover)}
}

// Process consumes data, which is what it handed back last time followed
// by new bytes, and returns how many bytes at the end of data it did not
// consume (at most HoldMax): the caller passes them in again, in front of
// the next bytes. final ends the stream: everything is consumed and
// flushed.
func (r *OutputRedactor) Process(data []byte, final bool) (held int) {
	return r.stage.process(data, final)
}

// HoldMax is the most Process may hand back.
func (r *OutputRedactor) HoldMax() int { return r.stage.holdMax() }

// redactStage is what OutputRedactor runs: streamRedactor, or
// discoveringRedactor when the output itself may reveal secrets.
type redactStage interface {
	process(data []byte, final bool) (held int)
	holdMax() int
}

// run reads until EOF or until the read end is closed under it. The bytes
// the redactor hands back stay at the front of the buffer and the next
// read lands right behind them, so no chunk is copied to be redacted.
func (d *drain) run() {
	bp := readBufs.Get().(*[]byte)
	defer readBufs.Put(bp)
	if need := d.red.HoldMax() + d.size; cap(*bp) < need {
		*bp = make([]byte, need)
	}
	buf := (*bp)[:cap(*bp)]
	held := 0
	for {
		n, err := d.r.Read(buf[held : held+min(d.size, len(buf)-held)])
		if n > 0 {
			data := buf[:held+n]
			held = d.red.Process(data, false)
			copy(buf, data[len(data)-held:])
		}
		if err != nil {
			break
		}
	}
	d.red.Process(buf[:held], true)
	d.tail.Flush()
	if d.onChunk != nil {
		if s := d.chunks.flush(); s != "" {
			d.onChunk(d.name, s)
		}
	}
}

// sink receives redacted bytes.
func (d *drain) sink(p []byte) {
	d.tail.Write(p)
	if d.art != nil && d.art.err == nil {
		d.art.Write(p)
		if d.art.err != nil && d.artFailed != nil {
			select {
			case d.artFailed <- struct{}{}:
			default:
			}
		}
	}
	if d.onChunk != nil {
		if s := d.chunks.text(p); s != "" {
			d.onChunk(d.name, s)
		}
	}
}

// result returns the stream's Result part; call after run returned and the
// artifact was finished.
func (d *drain) result() Stream {
	s := d.tail.stream()
	s.ArtifactPath = d.art.storedPath()
	if s.ArtifactPath != "" && d.art.dropped > 0 {
		s.ArtifactTruncated = true
	}
	return s
}

// sinkFunc adapts a function to io.Writer; it always reports success.
type sinkFunc func(p []byte)

func (f sinkFunc) Write(p []byte) (int, error) {
	f(p)
	return len(p), nil
}

var _ io.Writer = sinkFunc(nil)
