package corerepo

import (
	"cmp"
	"fmt"
	"slices"
)

func sortedKeys[M ~map[K]V, K cmp.Ordered, V any](m M) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }
