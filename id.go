package demiurge

import (
	"crypto/rand"
	"encoding/binary"
	"strings"
	"sync"
	"time"
)

// crockford is the Crockford base32 alphabet: time-sortable under byte order.
const crockford = "0123456789abcdefghjkmnpqrstvwxyz"

var idState struct {
	mu     sync.Mutex // guards lastMS, last
	lastMS uint64
	last   [10]byte
}

// NewID returns "<prefix>_<26 chars>": 48 bits of Unix milliseconds followed by
// 80 random bits, Crockford base32, lowercase. IDs made by one process in the
// same millisecond increase strictly (the random part is incremented), so the
// lexical order of IDs follows creation order within a process; across
// processes it follows the clock to the millisecond.
func NewID(prefix string) string {
	var b [16]byte
	ms := uint64(time.Now().UnixMilli())
	idState.mu.Lock()
	if ms <= idState.lastMS {
		ms = idState.lastMS
		incr(idState.last[:])
	} else {
		idState.lastMS = ms
		if _, err := rand.Read(idState.last[:]); err != nil {
			panic("demiurge: crypto/rand failed: " + err.Error())
		}
	}
	copy(b[6:], idState.last[:])
	idState.mu.Unlock()
	var t [8]byte
	binary.BigEndian.PutUint64(t[:], ms)
	copy(b[:6], t[2:])

	var sb strings.Builder
	sb.Grow(len(prefix) + 27)
	sb.WriteString(prefix)
	sb.WriteByte('_')
	sb.WriteString(encode128(b))
	return sb.String()
}

func incr(b []byte) {
	for i := len(b) - 1; i >= 0; i-- {
		b[i]++
		if b[i] != 0 {
			return
		}
	}
}

// encode128 encodes 128 bits as 26 base32 characters (the first carries 3 bits).
func encode128(b [16]byte) string {
	hi := binary.BigEndian.Uint64(b[:8])
	lo := binary.BigEndian.Uint64(b[8:])
	var out [26]byte
	for i := 25; i >= 0; i-- {
		out[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(out[:])
}

// IDPrefix reports the prefix of an ID made by NewID ("" when id has none).
func IDPrefix(id string) string {
	i := strings.LastIndexByte(id, '_')
	if i < 0 || len(id)-i-1 != 26 {
		return ""
	}
	return id[:i]
}
