package textread

import (
	"bytes"
	"context"
	"io"
	"sync"
	"unicode/utf8"
)

// readBufferBytes is the one buffer a read streams through.
const BufferBytes = 64 << 10

// Reader decodes UTF-8 from r through one fixed buffer, each invalid
// byte counting as one U+FFFD character, so that a window of a file can be
// skipped to, taken and measured without holding more than the buffer:
// memory does not grow with the file.
type Reader struct {
	r        io.Reader
	buf      []byte
	lo, hi   int // unread bytes are buf[lo:hi]
	eof      bool
	err      error // first read error other than io.EOF
	consumed int64 // bytes consumed so far
}

func NewReader(r io.Reader, size int) *Reader {
	return &Reader{r: r, buf: make([]byte, max(size, 4*utf8.UTFMax))}
}

// readBuffers recycles the read buffers of read_file and search_files, so
// that repeated calls do not each allocate one.
var readBuffers = sync.Pool{New: func() any { b := make([]byte, BufferBytes); return &b }}

// Pooled returns a runeReader over a pooled buffer and the
// function that gives the buffer back; nothing may use the reader after.
func Pooled(r io.Reader) (*Reader, func()) {
	b := readBuffers.Get().(*[]byte)
	return &Reader{r: r, buf: *b}, func() { readBuffers.Put(b) }
}

// Err is the first read error other than io.EOF.
func (rr *Reader) Err() error { return rr.err }

// Consumed is the number of bytes consumed so far.
func (rr *Reader) Consumed() int64 { return rr.consumed }

// Reset points rr at a new reader, keeping its buffer.
func (rr *Reader) Reset(r io.Reader) {
	*rr = Reader{r: r, buf: rr.buf}
}

// Fill makes sure the unread bytes start with a whole character (or that
// the input is exhausted) and reports whether any bytes remain.
func (rr *Reader) Fill() bool {
	rr.peek(utf8.UTFMax)
	return rr.hi > rr.lo
}

// peek returns up to n unread bytes without consuming them, reading until
// it has n or the input ends. n must not exceed the buffer.
func (rr *Reader) peek(n int) []byte {
	n = min(n, len(rr.buf))
	if rr.hi-rr.lo < n && !rr.eof {
		rr.hi = copy(rr.buf, rr.buf[rr.lo:rr.hi])
		rr.lo = 0
		for empty := 0; rr.hi < n && !rr.eof; {
			k, err := rr.r.Read(rr.buf[rr.hi:])
			rr.hi += k
			switch {
			case err == io.EOF:
				rr.eof = true
			case err != nil:
				rr.eof, rr.err = true, err
			case k == 0:
				if empty++; empty > 100 {
					rr.eof, rr.err = true, io.ErrNoProgress
				}
			}
		}
	}
	return rr.buf[rr.lo:min(rr.hi, rr.lo+n)]
}

// chunk returns the unread bytes that hold only whole characters.
func (rr *Reader) chunk() []byte {
	b := rr.buf[rr.lo:rr.hi]
	if rr.eof {
		return b
	}
	// A character may be cut at the end of the buffer: keep its first
	// bytes for the next fill.
	for k := 1; k < utf8.UTFMax && k <= len(b); k++ {
		if i := len(b) - k; utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}

func (rr *Reader) advance(n int) {
	rr.lo += n
	rr.consumed += int64(n)
}

// Skip discards up to n characters and returns how many it discarded
// (fewer at the end of the input).
func (rr *Reader) Skip(ctx context.Context, n int64) (int64, error) {
	var done int64
	for done < n && rr.Fill() {
		if err := ctx.Err(); err != nil {
			return done, err
		}
		c := rr.chunk()
		if k := int64(utf8.RuneCount(c)); done+k <= n {
			done += k
			rr.advance(len(c))
			continue
		}
		i := 0
		for done < n {
			_, size := utf8.DecodeRune(c[i:])
			i += size
			done++
		}
		rr.advance(i)
	}
	return done, rr.err
}

// Take appends up to n characters to out, invalid bytes as U+FFFD, and
// returns how many it appended.
func (rr *Reader) Take(n int64, out *bytes.Buffer) (int64, error) {
	var done int64
	for done < n && rr.Fill() {
		c := rr.chunk()
		i := 0
		for i < len(c) && done < n {
			if c[i] < utf8.RuneSelf {
				j := i + 1
				for j < len(c) && c[j] < utf8.RuneSelf && done+int64(j-i) < n {
					j++
				}
				out.Write(c[i:j])
				done += int64(j - i)
				i = j
				continue
			}
			r, size := utf8.DecodeRune(c[i:])
			if r == utf8.RuneError && size == 1 {
				out.WriteRune(utf8.RuneError)
			} else {
				out.Write(c[i : i+size])
			}
			i += size
			done++
		}
		rr.advance(i)
	}
	return done, rr.err
}

// Count counts the characters that remain, reading at most budget more
// bytes. complete reports whether it reached the end of the input.
func (rr *Reader) Count(ctx context.Context, budget int64) (n int64, complete bool, err error) {
	start := rr.consumed
	for rr.Fill() {
		if rr.consumed-start >= budget {
			return n, false, rr.err
		}
		if err := ctx.Err(); err != nil {
			return n, false, err
		}
		c := rr.chunk()
		n += int64(utf8.RuneCount(c))
		rr.advance(len(c))
	}
	return n, rr.err == nil, rr.err
}
