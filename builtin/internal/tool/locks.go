package tool

import (
	"hash/fnv"
	"sync"
)

// Stripes serialises read-modify-write updates within this process. A key
// (a file or directory path) hashes onto one of a fixed set of mutexes, so
// the set never grows; unrelated keys sharing a stripe merely wait for each
// other. Nothing here coordinates separate processes.
type Stripes [64]sync.Mutex

// Lock locks key's stripe and returns its unlock.
func (s *Stripes) Lock(key string) (unlock func()) {
	h := fnv.New32a()
	_, _ = h.Write([]byte(key))
	m := &s[h.Sum32()%uint32(len(s))]
	m.Lock()
	return m.Unlock
}
