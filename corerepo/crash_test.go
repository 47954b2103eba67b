//go:build unix

package corerepo

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"syscall"
	"testing"
)

// The crash tests run a promotion, rollback or save in a child process (the
// test binary re-executed) that kills itself with SIGKILL at a named point,
// then check that the parent sees live old or new, a clean consistency
// check and a checkout that matches live.

const (
	envCrashHome  = "COREREPO_CRASH_HOME"
	envCrashPoint = "COREREPO_CRASH_POINT"
	envCrashOp    = "COREREPO_CRASH_OP"
)

func TestCrashChild(t *testing.T) {
	home := os.Getenv(envCrashHome)
	if home == "" {
		t.Skip("helper process for the crash tests")
	}
	point, op := os.Getenv(envCrashPoint), os.Getenv(envCrashOp)
	opts := Options{CrashPoint: func(p string) {
		if p == point {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}
	}}
	ctx := context.Background()
	if op == "init" {
		_, _, err := Init(ctx, HomePaths(home), opts, "")
		fmt.Fprintf(os.Stderr, "child finished without crashing: %v\n", err)
		os.Exit(3)
	}
	r, err := Open(HomePaths(home), opts)
	if err != nil {
		t.Fatal(err)
	}
	kind, arg, _ := strings.Cut(op, ":")
	switch kind {
	case "promote":
		var res *PromoteResult
		res, err = r.Promote(ctx, arg, PromoteOptions{})
		if err == nil && !res.Promoted {
			fmt.Fprintf(os.Stderr, "not promoted: %s %+v\n", res.Summary, res.Review.Gates)
		}
	case "rollback":
		_, err = r.Rollback(ctx, "", "")
	case "save":
		_, err = r.Save(ctx, SaveOptions{})
	}
	fmt.Fprintf(os.Stderr, "child finished without crashing: %v\n", err)
	os.Exit(3)
}

func runCrashChild(t *testing.T, home, op, point string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), envCrashHome+"="+home, envCrashPoint+"="+point, envCrashOp+"="+op)
	out, err := cmd.CombinedOutput()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("child did not die by SIGKILL at %s: %v\n%s", point, err, out)
	}
}

func TestCrashDuringSwitch(t *testing.T) {
	ctx := context.Background()
	points := []string{"after-journal", "after-live", "after-previous", "checkout-first-file", "after-checkout"}
	for _, op := range []string{"promote", "rollback", "save"} {
		for _, point := range points {
			if op == "save" && point == "checkout-first-file" {
				continue // a save writes no checkout files
			}
			t.Run(op+"/"+point, func(t *testing.T) {
				home := t.TempDir()
				p := HomePaths(home)
				if err := installOnly(p.Agents, "all"); err != nil {
					t.Fatal(err)
				}
				r, _, err := Init(ctx, p, Options{}, "")
				if err != nil {
					t.Fatal(err)
				}
				childOp := op
				switch op {
				case "promote":
					run := startEdited(t, r, func(a string) {
						editFile(t, a, "assistant/agent/SOUL.md", "", "promoted\n")
						writeFile(t, a, "assistant/agent/skills/new.md", "---\nname: n\ndescription: d\n---\nx\n")
						removeFile(t, a, "assistant/agent/skills/debugging.md")
					})
					childOp = "promote:" + run.ID
				case "rollback":
					editFile(t, p.Agents, "assistant/agent/SOUL.md", "", "saved\n")
					writeFile(t, p.Agents, "assistant/agent/skills/new.md", "---\nname: n\ndescription: d\n---\nx\n")
					if _, err := r.Save(ctx, SaveOptions{}); err != nil {
						t.Fatal(err)
					}
				case "save":
					editFile(t, p.Agents, "assistant/agent/SOUL.md", "", "saved\n")
				}
				old := mustLive(t, r)
				runCrashChild(t, home, childOp, point)

				r2, err := Open(p, Options{})
				if err != nil {
					t.Fatalf("Open after crash: %v", err)
				}
				mustClean(t, r2)
				live := mustLive(t, r2)
				st, err := r2.Status()
				if err != nil {
					t.Fatal(err)
				}
				if (point == "after-journal") != (live == old) {
					t.Fatalf("crash at %s: live moved = %v", point, live != old)
				}
				if live == old {
					// Not moved: the checkout is untouched (a save's edits
					// are still local edits).
					if op != "save" && !st.Clean {
						t.Fatalf("live old but checkout changed: %+v", st)
					}
					if op == "save" && len(st.Changes) != 1 {
						t.Fatalf("save edits lost: %+v", st)
					}
					return
				}
				if !st.Clean {
					t.Fatalf("live new but checkout differs: %+v", st)
				}
				if prev, _ := r2.Previous(); prev != old {
					t.Fatalf("previous = %s, want old live %s", prev, old)
				}
			})
		}
	}
}

// A first open killed before its live ref leaves no repository Init would
// keep: the next Init starts over from the templates, and the edit the
// tree held is still a local edit, not live.
func TestCrashDuringInit(t *testing.T) {
	for _, point := range []string{"init-after-commit", "init-before-live"} {
		t.Run(point, func(t *testing.T) {
			home := t.TempDir()
			p := HomePaths(home)
			if err := installOnly(p.Agents, "all"); err != nil {
				t.Fatal(err)
			}
			editFile(t, p.Agents, "assistant/agent.yaml", grantOld, grantNew)
			edited := readFile(t, p.Agents, "assistant/agent.yaml")
			runCrashChild(t, home, "init", point)
			// The half-made repository has no live ref: Check reports it,
			// so nothing works on it, and Init starts over.
			if half, err := Open(p, Options{}); err != nil || len(half.Check()) == 0 {
				t.Fatalf("after the crash: Open %v, or a repository without a live ref checks clean", err)
			}
			r, res := mustInit(t, p)
			mustClean(t, r)
			if got, want := liveFiles(t, r), embeddedFiles(t); !reflect.DeepEqual(got, want) {
				t.Fatal("live after the crash is not the templates")
			}
			if readFile(t, p.Agents, "assistant/agent.yaml") != edited {
				t.Fatal("the crash changed the agents tree")
			}
			wantBlocked(t, r, res.Revision, grantKey)
		})
	}
}
