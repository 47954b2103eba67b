//go:build linux

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// processesWith lists the live processes (not zombies) whose command line
// contains marker, as "pid: command line".
func processesWith(marker string) []string {
	var out []string
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		cmdline, err := os.ReadFile(d + "/cmdline")
		if err != nil || len(cmdline) == 0 {
			continue
		}
		line := strings.TrimSpace(strings.ReplaceAll(string(cmdline), "\x00", " "))
		if strings.Contains(line, marker) && !zombie(d) {
			out = append(out, filepath.Base(d)+": "+line)
		}
	}
	return out
}

// sessionMembers lists the live processes of session sid, as "pid: command".
func sessionMembers(sid int) []string {
	var out []string
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		b, err := os.ReadFile(d + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		f := strings.Fields(s[i+1:]) // state, ppid, pgrp, session, ...
		if i < 0 || len(f) < 4 || f[0] == "Z" {
			continue
		}
		if n, _ := strconv.Atoi(f[3]); n == sid {
			out = append(out, fmt.Sprintf("%s: %s", filepath.Base(d), s[strings.IndexByte(s, '(')+1:i]))
		}
	}
	return out
}

func zombie(procDir string) bool {
	b, err := os.ReadFile(procDir + "/stat")
	if err != nil {
		return true // gone
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || strings.HasPrefix(s[i+1:], " Z") || strings.HasPrefix(s[i+1:], " X")
}

// waitProcesses polls until list() is empty (true) or the deadline
// passes (false, with what was left).
func waitProcesses(list func() []string) (left []string, gone bool) {
	for end := time.Now().Add(termDeadline); ; {
		left = list()
		if len(left) == 0 {
			return nil, true
		}
		if time.Now().After(end) {
			return left, false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitProcess polls until some process's command line contains marker.
func waitProcess(t *testing.T, marker string) {
	t.Helper()
	for end := time.Now().Add(termDeadline); len(processesWith(marker)) == 0; {
		if time.Now().After(end) {
			t.Fatalf("no process %q started", marker)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
