package process

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/demiurge/demiurge"
)

// bootIDPath names the kernel's per-boot random identifier.
const bootIDPath = "/proc/sys/kernel/random/boot_id"

// StartMarker returns "<boot_id>:<starttime>" for pid. It fails with
// ENOTFOUND when no such process exists and with EINTERNAL when /proc cannot
// be read or parsed.
func StartMarker(pid int) (string, error) {
	info, err := readStat(pid)
	if err != nil {
		return "", err
	}
	boot, err := os.ReadFile(bootIDPath)
	if err != nil {
		return "", demiurge.WrapError(demiurge.EINTERNAL, err, "read %s: %s", bootIDPath, demiurge.IOReason(err))
	}
	return strings.TrimSpace(string(boot)) + ":" + info.startTime, nil
}

// Alive reports whether pid names a running (not zombie) process whose start
// marker equals marker. An empty marker cannot identify a process, so Alive
// then reports only whether some live process holds pid.
func Alive(pid int, marker string) bool {
	if pid <= 0 {
		return false
	}
	info, err := readStat(pid)
	if err != nil || info.state == 'Z' || info.state == 'X' {
		return false
	}
	if marker == "" {
		return true
	}
	boot, err := os.ReadFile(bootIDPath)
	if err != nil {
		return false
	}
	return strings.TrimSpace(string(boot))+":"+info.startTime == marker
}

// statInfo holds the fields of /proc/<pid>/stat this package needs.
type statInfo struct {
	state     byte   // field 3
	startTime string // field 22, decimal clock ticks since boot
}

func readStat(pid int) (statInfo, error) {
	if pid <= 0 {
		return statInfo{}, demiurge.Errorf(demiurge.EINVALID, "invalid pid %d", pid)
	}
	path := fmt.Sprintf("/proc/%d/stat", pid)
	b, err := os.ReadFile(path)
	if err != nil {
		if os.IsNotExist(err) {
			return statInfo{}, demiurge.WrapError(demiurge.ENOTFOUND, err, "process not found: %d", pid)
		}
		return statInfo{}, demiurge.WrapError(demiurge.EINTERNAL, err, "read %s: %s", path, demiurge.IOReason(err))
	}
	info, err := parseStat(b)
	if err != nil {
		return statInfo{}, demiurge.WrapError(demiurge.EINTERNAL, err, "parse %s: unexpected format", path)
	}
	return info, nil
}

// parseStat parses the content of /proc/<pid>/stat. Field 2 (comm) is
// parenthesised and may itself contain spaces and ')' characters, so the
// fields after it are found by splitting at the LAST ')'.
func parseStat(b []byte) (statInfo, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return statInfo{}, fmt.Errorf("no ')' closing the comm field")
	}
	rest := strings.Fields(string(b[i+1:]))
	// rest[0] is field 3 (state); field n is rest[n-3].
	const startTimeField = 22
	if len(rest) < startTimeField-2 {
		return statInfo{}, fmt.Errorf("%d fields after comm, want at least %d", len(rest), startTimeField-2)
	}
	if len(rest[0]) != 1 {
		return statInfo{}, fmt.Errorf("state field %q is not one character", rest[0])
	}
	st := rest[startTimeField-3]
	if _, err := strconv.ParseUint(st, 10, 64); err != nil {
		return statInfo{}, fmt.Errorf("starttime field %q is not a number", st)
	}
	return statInfo{state: rest[0][0], startTime: st}, nil
}
