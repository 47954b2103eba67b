// Package procstat reads the memory figures of /proc/<pid>/status for the
// bench driver's memory rows.
package procstat

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Status returns the kB-valued fields of a /proc/<pid>/status file, in MiB
// ("VmRSS:	  23456 kB" → VmRSS: 22.9). A file without a VmRSS line, or
// with a kB field that is not a number, is an error naming the file.
func Status(path string) (map[string]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		fields := strings.Fields(val)
		if !ok || len(fields) != 2 || fields[1] != "kB" {
			continue
		}
		kb, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			return nil, fmt.Errorf("%s: field %s: %v", path, key, err)
		}
		out[key] = kb / 1024
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if _, ok := out["VmRSS"]; !ok {
		return nil, errors.New(path + ": no VmRSS line")
	}
	return out, nil
}
