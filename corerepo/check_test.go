package corerepo

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/coretree"
	"github.com/demiurge/demiurge/gitrepo"
)

func codes(fs []gitrepo.Finding) string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Code)
	}
	return strings.Join(out, ",")
}

// checkoutHeadFile is where the storage records the live checkout's
// commit (the package doc's layout).
func checkoutHeadFile(p Paths) string { return filepath.Join(p.GitDir, "demiurge", "checkout") }

func mustHash(t *testing.T, s string) coretree.Hash {
	t.Helper()
	h, ok := coretree.ParseHash(s)
	if !ok {
		t.Fatalf("not a commit id: %q", s)
	}
	return h
}

func TestCheckFindings(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name     string
		breakIt  func(t *testing.T, p Paths, r *Repo)
		want     string
		repaired string // findings left after Repair
	}{
		{"checkout head missing", func(t *testing.T, p Paths, r *Repo) {
			os.Remove(checkoutHeadFile(p))
		}, gitrepo.CodeCheckoutHeadMissing, ""},
		{"checkout head mismatch", func(t *testing.T, p Paths, r *Repo) {
			editFile(t, p.Agents, "assistant/agent/SOUL.md", "", "x\n")
			res, err := r.Save(ctx, SaveOptions{})
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(checkoutHeadFile(p), []byte(res.Previous+"\n"), 0o600)
		}, gitrepo.CodeCheckoutHeadMismatch, ""},
		{"previous equals live", func(t *testing.T, p Paths, r *Repo) {
			r.git.SetRef(gitrepo.RefPrevious, mustHash(t, mustLive(t, r)))
		}, gitrepo.CodePreviousRefMatchesLive, ""},
		{"previous invalid", func(t *testing.T, p Paths, r *Repo) {
			r.git.SetRef(gitrepo.RefPrevious, mustHash(t, strings.Repeat("ab", 20)))
		}, gitrepo.CodePreviousRefInvalid, ""},
		{"live missing", func(t *testing.T, p Paths, r *Repo) {
			os.Remove(filepath.Join(p.GitDir, gitrepo.RefLive))
		}, gitrepo.CodeLiveRefMissing, gitrepo.CodeLiveRefMissing},
		{"checkout missing", func(t *testing.T, p Paths, r *Repo) {
			os.RemoveAll(p.Agents)
		}, gitrepo.CodeCheckoutMissing, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, r := newHome(t)
			tc.breakIt(t, p, r)
			if got := codes(r.Check()); got != tc.want {
				t.Fatalf("Check = %s, want %s", got, tc.want)
			}
			_, err := r.Save(ctx, SaveOptions{})
			wantCode(t, err, demiurge.ECONFLICT, "core repository consistency check failed: "+strings.Split(tc.want, ",")[0]+": ")
			left, err := r.Repair()
			if err != nil {
				t.Fatal(err)
			}
			if got := codes(left); got != tc.repaired {
				t.Fatalf("after Repair = %s, want %s", got, tc.repaired)
			}
			if tc.repaired == "" {
				if st, err := r.Status(); err != nil || !st.Clean {
					t.Fatalf("Status after repair = %+v, %v", st, err)
				}
			}
		})
	}
	t.Run("repository missing", func(t *testing.T) {
		p := HomePaths(t.TempDir())
		if _, err := Open(p, Options{}); demiurge.ErrorCode(err) != demiurge.ENOTFOUND {
			t.Fatalf("Open = %v", err)
		}
		if got := codes(gitrepo.New(p.storage(), gitrepo.Options{}).Check()); got != gitrepo.CodeRepositoryMissing {
			t.Fatalf("Check = %s", got)
		}
	})
}

func TestRollback(t *testing.T) {
	ctx := context.Background()
	p, r := newHome(t)
	var switched []string
	r.onSwitch = func(c []string) { switched = c }
	initRev := mustLive(t, r)
	_, err := r.Rollback(ctx, "", "")
	wantCode(t, err, demiurge.ENOTFOUND, "no previous core revision recorded")

	editFile(t, p.Agents, "assistant/agent/SOUL.md", "", "A\n")
	a, err := r.Save(ctx, SaveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, p.Agents, "assistant/agent/skills/b.md", "---\nname: b\ndescription: b\n---\nB\n")
	b, err := r.Save(ctx, SaveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rb, err := r.Rollback(ctx, "previous", "undo b")
	if err != nil {
		t.Fatal(err)
	}
	if rb.Target != a.Revision || rb.Previous != b.Revision || mustLive(t, r) != rb.Revision || rb.Revision == a.Revision {
		t.Fatalf("Rollback = %+v", rb)
	}
	if rb.Summary != "rollback committed: "+rb.Revision[:12]+" (takes effect next turn)" {
		t.Fatalf("summary = %q", rb.Summary)
	}
	if exists(p.Agents, "assistant/agent/skills/b.md") || !strings.Contains(readFile(t, p.Agents, "assistant/agent/SOUL.md"), "A") {
		t.Fatal("checkout does not hold the target tree")
	}
	vs, _ := r.Versions(1)
	if vs[0].Message != "rollback core tree to "+a.Revision[:12]+"\n\nReason: undo b" || vs[0].Parent != b.Revision {
		t.Fatalf("rollback commit = %+v", vs[0])
	}
	if strings.Join(switched, ",") != "assistant" {
		t.Fatalf("switched = %v", switched)
	}
	mustClean(t, r)
	// Back to the first revision by prefix.
	rb, err = r.Rollback(ctx, initRev[:8], "")
	if err != nil || rb.Target != initRev {
		t.Fatalf("Rollback(prefix) = %+v, %v", rb, err)
	}
	if strings.Contains(readFile(t, p.Agents, "assistant/agent/SOUL.md"), "A\n") {
		t.Fatal("SOUL.md not rolled back")
	}
	_, err = r.Rollback(ctx, "deadbeef", "")
	wantCode(t, err, demiurge.ENOTFOUND, "core revision not found: deadbeef")
	if st, _ := r.Status(); !st.Clean {
		t.Fatalf("status = %+v", st)
	}
}
