package mcp_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
)

// statFields returns the fields of /proc/<pid>/stat after the command
// name (field 3 first), nil when there is no such process.
func statFields(pid string) []string {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return nil
	}
	s := string(b)
	return strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
}

// proc is a process identified by pid and start time, so a recycled pid
// is never taken for it.
type proc struct{ pid, start string }

func procOf(t *testing.T, pid string) proc {
	t.Helper()
	f := statFields(pid)
	if len(f) < 20 {
		t.Fatalf("process %s not found", pid)
	}
	return proc{pid, f[19]}
}

// reaped reports that p is gone from /proc: neither alive nor a zombie.
func (p proc) reaped() bool {
	f := statFields(p.pid)
	return len(f) < 20 || f[19] != p.start
}

// inGroup lists the processes whose process group or session is pid's.
func inGroup(pid string) []string {
	entries, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		if f := statFields(e.Name()); len(f) > 3 && (f[2] == pid || f[3] == pid) {
			out = append(out, e.Name())
		}
	}
	return out
}

// A stdio server that exits or is killed is reaped by the process
// manager with its whole tree, with no Close or later preparation to
// trigger it: no zombie of it, its grandchild gone, nothing left in its
// group or session.
func TestDeadServerIsReapedWithItsTree(t *testing.T) {
	for _, how := range []string{"exits", "killed"} {
		t.Run(how, func(t *testing.T) {
			requireLinux(t)
			e := newEnv(t)
			d, state := e.stdioDecl("demo", "")
			tc := e.turn(sessionID(), "mcp.connect:demo", "mcp.call:demo")
			defs, _ := e.prepare(context.Background(), tc, newGate().fn, d)
			res := call(t, context.Background(), tc, defs, "demo__spawn", nil)
			if res.Status != demiurge.EffectSucceeded {
				t.Fatalf("spawn: %+v", res)
			}
			child := procOf(t, strings.TrimSpace(res.ModelView))
			server := procOf(t, starts(t, state)[0])
			if how == "exits" {
				call(t, context.Background(), tc, defs, "demo__crash", nil)
			} else {
				pid, _ := strconv.Atoi(server.pid)
				if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
			}
			eventually(t, 10*time.Second, "the server's tree to be reaped", func() bool {
				return server.reaped() && child.reaped() && len(inGroup(server.pid)) == 0
			})
		})
	}
}
