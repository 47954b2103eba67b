package terminal

// A reader of the gitlink entries of a git index file, to find the
// submodules git status would recurse into.

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
)

// gitIndexGitlinks returns the paths of the gitlink (submodule) entries of
// a git index file (versions 2 to 4) and the hex name of its shared index
// when it is a split index.
func gitIndexGitlinks(data []byte, hashLen int) (links []string, shared string, err error) {
	if len(data) < 12+hashLen || string(data[:4]) != "DIRC" {
		return nil, "", errors.New("not an index file")
	}
	version := binary.BigEndian.Uint32(data[4:])
	if version < 2 || version > 4 {
		return nil, "", fmt.Errorf("unsupported index version %d", version)
	}
	count := binary.BigEndian.Uint32(data[8:])
	end := len(data) - hashLen
	off := 12
	var prev []byte
	for i := uint32(0); i < count; i++ {
		fixed := 40 + hashLen + 2
		if off+fixed > end {
			return nil, "", errors.New("truncated entry")
		}
		mode := binary.BigEndian.Uint32(data[off+24:])
		flags := binary.BigEndian.Uint16(data[off+40+hashLen:])
		nameOff := off + fixed
		if flags&0x4000 != 0 { // extended flags follow
			nameOff += 2
		}
		if nameOff > end {
			return nil, "", errors.New("truncated entry")
		}
		var name []byte
		if version == 4 {
			strip, n := gitVarint(data[nameOff:end])
			if n == 0 || strip > uint64(len(prev)) {
				return nil, "", errors.New("bad path compression")
			}
			suffix := data[nameOff+n : end]
			nul := bytes.IndexByte(suffix, 0)
			if nul < 0 {
				return nil, "", errors.New("truncated path")
			}
			name = append(append([]byte(nil), prev[:len(prev)-int(strip)]...), suffix[:nul]...)
			off = nameOff + n + nul + 1
		} else {
			nameLen := int(flags & 0x0FFF)
			if nameLen == 0x0FFF {
				nameLen = bytes.IndexByte(data[nameOff:end], 0)
			}
			if nameLen < 0 || nameOff+nameLen >= end {
				return nil, "", errors.New("truncated path")
			}
			name = data[nameOff : nameOff+nameLen]
			off += (nameOff - off + nameLen + 8) &^ 7
		}
		if mode&0o170000 == 0o160000 {
			links = append(links, string(name))
		}
		prev = name
	}
	for off+8 <= end {
		size := int(binary.BigEndian.Uint32(data[off+4:]))
		if size < 0 || size > end-off-8 {
			return nil, "", errors.New("truncated extension")
		}
		if string(data[off:off+4]) == "link" {
			if size < hashLen {
				return nil, "", errors.New("truncated split-index link")
			}
			oid := data[off+8 : off+8+hashLen]
			if !bytes.Equal(oid, make([]byte, hashLen)) {
				shared = hex.EncodeToString(oid)
			}
		}
		off += 8 + size
	}
	if off > end {
		return nil, "", errors.New("truncated index")
	}
	return links, shared, nil
}

// gitVarint decodes git's offset varint (varint.c); n is 0 when it is
// malformed.
func gitVarint(b []byte) (v uint64, n int) {
	if len(b) == 0 {
		return 0, 0
	}
	c := b[0]
	v = uint64(c & 127)
	n = 1
	for c&128 != 0 {
		if n >= len(b) || v+1 > 1<<56 {
			return 0, 0
		}
		v++
		c = b[n]
		n++
		v = v<<7 + uint64(c&127)
	}
	return v, n
}
