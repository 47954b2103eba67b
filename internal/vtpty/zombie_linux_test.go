package vtpty_test

import (
	"fmt"
	"os"
	"strings"
)

// zombie reports whether pid is a zombie waiting for its reaper.
func zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && strings.HasPrefix(s[i+1:], " Z")
}
