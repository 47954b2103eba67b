package builtin

import (
	"hash/fnv"
	"sync"
)

// stripes serialises read-modify-write updates within this process. A key
// (a file or directory path) hashes onto one of a fixed set of mutexes, so
// the set never grows; unrelated keys sharing a stripe merely wait for each
// other. Nothing here coordinates separate processes.
type stripes [64]sync.Mutex

// lock locks key's stripe and returns its unlock.
func (s *stripes) lock(key string) (unlock func()) {
	h := fnv.New32a()
	_, _ = h.Write([]byte(key))
	m := &s[h.Sum32()%uint32(len(s))]
	m.Lock()
	return m.Unlock
}
