package terminal

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// gitFixture is a hostile-repository playground: a workspace holding one
// repository, a clean HOME, a directory of marker-writing hook scripts
// outside the workspace, and a bin directory of fake default programs
// (gpg, gpgsm, ssh-keygen, ssh) first on PATH.
type gitFixture struct {
	t     *testing.T
	ws    string // workspace root and the repository's work tree
	home  string
	hooks string // scripts and the markers they write
	bin   string
}

func gitRequire(t *testing.T) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("hostile-repository tests use /bin/sh scripts")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
}

// newGitFixture makes a repository with two commits: f.txt ("hello" then
// "world") and a .gitattributes assigning *.txt the filter, diff and merge
// driver "evil", which no config defines yet.
func newGitFixture(t *testing.T) *gitFixture {
	t.Helper()
	gitRequire(t)
	base := t.TempDir()
	f := &gitFixture{t: t,
		ws: filepath.Join(base, "ws"), home: filepath.Join(base, "home"),
		hooks: filepath.Join(base, "hooks"), bin: filepath.Join(base, "bin"),
	}
	for _, d := range []string{f.ws, f.home, f.hooks, f.bin} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"gpg", "gpgsm", "ssh-keygen", "ssh"} {
		f.script(filepath.Join(f.bin, p), f.marker("default-"+p))
	}
	f.git(f.ws, "init", "-q")
	f.write(".gitattributes", "*.txt filter=evil diff=evil merge=evil\n")
	f.write("f.txt", "hello\n")
	f.git(f.ws, "add", ".")
	f.git(f.ws, "commit", "-q", "-m", "one")
	f.write("f.txt", "world\n")
	f.git(f.ws, "commit", "-q", "-am", "two")
	return f
}

// baseEnv is the environment of the control runs: isolated from the
// machine's git config, but with nothing neutralised.
func (f *gitFixture) baseEnv() []string {
	return []string{
		"PATH=" + f.bin + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + f.home,
		"XDG_CONFIG_HOME=" + filepath.Join(f.home, ".config"),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com",
		"LANG=C", "LC_ALL=C",
	}
}

// safeEnv appends gitSafetyEnv to env, the way the terminal does.
func safeEnv(env []string) []string { return append(slices.Clone(env), gitSafetyEnv()...) }

// run runs git in dir and returns its combined output; failures are the
// caller's business.
func (f *gitFixture) run(env []string, dir, stdin string, args ...string) (string, error) {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir, cmd.Env = dir, env
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		f.t.Fatalf("git %v timed out", args)
	}
	return string(out), err
}

// git runs git with the control environment and fails the test on error.
func (f *gitFixture) git(dir string, args ...string) string {
	f.t.Helper()
	out, err := f.run(f.baseEnv(), dir, "", args...)
	if err != nil {
		f.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(out)
}

func (f *gitFixture) write(rel, content string) {
	f.t.Helper()
	p := filepath.Join(f.ws, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// appendConfig appends raw text to the git config file at rel (relative
// to the workspace).
func (f *gitFixture) appendConfig(rel, text string) {
	f.t.Helper()
	p := filepath.Join(f.ws, filepath.FromSlash(rel))
	fh, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		f.t.Fatal(err)
	}
	defer fh.Close()
	if _, err := fh.WriteString(text); err != nil {
		f.t.Fatal(err)
	}
}

func (f *gitFixture) marker(name string) string { return filepath.Join(f.hooks, name+".ran") }

// hook creates a script named name that records each run in its marker
// and returns its path.
func (f *gitFixture) hook(name string) string {
	p := filepath.Join(f.hooks, name)
	f.script(p, f.marker(name))
	return p
}

func (f *gitFixture) script(path, marker string) {
	f.t.Helper()
	body := fmt.Sprintf("#!/bin/sh\necho \"$0 $*\" >> '%s'\nexit 0\n", marker)
	if err := os.WriteFile(path, []byte(body), 0o755); err != nil {
		f.t.Fatal(err)
	}
}

func (f *gitFixture) ran(name string) bool {
	_, err := os.Stat(f.marker(name))
	return err == nil
}

func (f *gitFixture) clearMarkers() {
	f.t.Helper()
	ms, _ := filepath.Glob(filepath.Join(f.hooks, "*.ran"))
	for _, m := range ms {
		if err := os.Remove(m); err != nil {
			f.t.Fatal(err)
		}
	}
}

// touchLater gives a tracked file a new mtime (same content), so the next
// index refresh must look at it again.
func (f *gitFixture) touchLater(rel string) {
	f.t.Helper()
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(f.ws, rel), later, later); err != nil {
		f.t.Fatal(err)
	}
}

// embeddedRepo commits a repository at rel inside the workspace and
// records it as a gitlink (a submodule without .gitmodules).
func (f *gitFixture) embeddedRepo(rel string) string {
	dir := filepath.Join(f.ws, rel)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		f.t.Fatal(err)
	}
	f.git(dir, "init", "-q")
	f.write(rel+"/.gitattributes", "* filter=evil\n")
	f.write(rel+"/in.txt", "one\n")
	f.git(dir, "add", ".")
	f.git(dir, "commit", "-q", "-m", "inner")
	f.git(f.ws, "add", rel)
	f.git(f.ws, "commit", "-q", "-m", "gitlink")
	return dir
}

// signedCommit writes a commit object whose gpgsig header has the given
// armour type, so verifying it selects a signature program by format.
func (f *gitFixture) signedCommit(armour string) string {
	tree := f.git(f.ws, "rev-parse", "HEAD^{tree}")
	obj := fmt.Sprintf("tree %s\nauthor t <t@example.com> 1700000000 +0000\ncommitter t <t@example.com> 1700000000 +0000\n"+
		"gpgsig -----BEGIN %s-----\n \n AAAA\n -----END %s-----\n\nsigned\n", tree, armour, armour)
	out, err := f.run(f.baseEnv(), f.ws, obj, "hash-object", "-t", "commit", "-w", "--stdin")
	if err != nil {
		f.t.Fatalf("hash-object: %v\n%s", err, out)
	}
	return strings.TrimSpace(out)
}

func TestGitSafetyEnvShape(t *testing.T) {
	env := gitSafetyEnv()
	vars := map[string]string{}
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			t.Fatalf("entry %q is not KEY=VALUE", kv)
		}
		if _, dup := vars[k]; dup {
			t.Fatalf("duplicate %s", k)
		}
		vars[k] = v
	}
	n, err := strconv.Atoi(vars["GIT_CONFIG_COUNT"])
	if err != nil || n != len(gitConfigOverrides) {
		t.Fatalf("GIT_CONFIG_COUNT = %q, want %d", vars["GIT_CONFIG_COUNT"], len(gitConfigOverrides))
	}
	config := map[string]string{}
	for i := 0; i < n; i++ {
		k, okK := vars["GIT_CONFIG_KEY_"+strconv.Itoa(i)]
		v, okV := vars["GIT_CONFIG_VALUE_"+strconv.Itoa(i)]
		if !okK || !okV || k == "" {
			t.Fatalf("config pair %d incomplete", i)
		}
		config[strings.ToLower(k)] = v
	}
	if len(vars) != 1+2*n+len(gitEnvOverrides) {
		t.Fatalf("unexpected entries in %v", env)
	}
	wantConfig := map[string]string{
		"core.fsmonitor": "false", "core.hookspath": "/dev/null", "core.pager": "cat",
		"core.editor": "true", "sequence.editor": "true", "core.askpass": "", "core.sshcommand": "ssh",
		"credential.helper": "", "gpg.program": "gpg", "gpg.openpgp.program": "gpg",
		"gpg.x509.program": "gpgsm", "gpg.ssh.program": "ssh-keygen", "protocol.ext.allow": "never",
	}
	for k, want := range wantConfig {
		if got, ok := config[k]; !ok || got != want {
			t.Errorf("config %s = %q (set %v), want %q", k, got, ok, want)
		}
	}
	wantEnv := map[string]string{
		"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_PARAMETERS": "",
		"GIT_PAGER": "cat", "GIT_ASKPASS": "", "SSH_ASKPASS": "", "GIT_TERMINAL_PROMPT": "0",
		"GIT_PROXY_COMMAND": "", "GIT_OPTIONAL_LOCKS": "0",
	}
	for k, want := range wantEnv {
		if got, ok := vars[k]; !ok || got != want {
			t.Errorf("%s = %q (set %v), want %q", k, got, ok, want)
		}
	}
}

// TestGitSafetyEnvKeepsGitWorking: the overrides break none of the
// auto-approved commands in a clean repository, and git -c still works.
func TestGitSafetyEnvKeepsGitWorking(t *testing.T) {
	f := newGitFixture(t)
	f.write("f.txt", "changed\n")
	env := safeEnv(f.baseEnv())
	for _, args := range [][]string{
		{"status"}, {"diff"}, {"diff", "HEAD~1"}, {"log", "-p"}, {"show"}, {"grep", "changed"},
		{"ls-files", "-m"}, {"rev-parse", "HEAD"}, {"branch", "--list"}, {"tag", "-l"},
		{"remote", "-v"}, {"worktree", "list"}, {"log", "--format=%G?"},
	} {
		out, err := f.run(env, f.ws, "", args...)
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		if strings.Contains(out, "error") || strings.Contains(out, "warning") || strings.Contains(out, "fatal") {
			t.Errorf("git %v complains:\n%s", args, out)
		}
	}
	if out, _ := f.run(env, f.ws, "", "diff"); !strings.Contains(out, "+changed") {
		t.Errorf("git diff lost its internal diff:\n%s", out)
	}
	if out, err := f.run(env, f.ws, "", "-c", "demo.key=cli", "config", "demo.key"); err != nil || strings.TrimSpace(out) != "cli" {
		t.Errorf("git -c: %q, %v", out, err)
	}
	if out, _ := f.run(env, f.ws, "", "var", "GIT_PAGER"); strings.TrimSpace(out) != "cat" {
		t.Errorf("git var GIT_PAGER = %q", out)
	}
	if got := gitRunsRepoPrograms(f.ws, f.ws); got != "" {
		t.Errorf("clean repository: reason %q", got)
	}

	// GIT_OPTIONAL_LOCKS=0: status leaves a stale index alone, where it
	// would otherwise rewrite it.
	index := filepath.Join(f.ws, ".git", "index")
	before, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	f.touchLater(".gitattributes") // unchanged content, new mtime
	if out, err := f.run(env, f.ws, "", "status"); err != nil {
		t.Fatalf("git status: %v\n%s", err, out)
	}
	if after, _ := os.ReadFile(index); string(after) != string(before) {
		t.Error("git status rewrote the index under gitSafetyEnv")
	}
	f.git(f.ws, "status")
	if after, _ := os.ReadFile(index); string(after) == string(before) {
		t.Error("control: git status did not rewrite the stale index, so the check proves nothing")
	}
}

// gitHookCase is a hostile configuration the overrides must neutralise:
// run without gitSafetyEnv, command makes every script in hooks run (the
// control, proving the case is live); with it, none does, and every
// fake default program in defaults runs in their place.
type gitHookCase struct {
	name     string
	setup    func(f *gitFixture) []string // extra control environment
	args     []string
	stdin    string
	hooks    []string
	defaults []string
	reason   string // substring gitRunsRepoPrograms must report, "" for none
}

func TestGitSafetyEnvNeutralisesHooks(t *testing.T) {
	fsmonitor := func(f *gitFixture) string { return "[core]\n\tfsmonitor = " + f.hook("fsmonitor") + "\n" }
	textconv := func(f *gitFixture) string { return "[diff \"evil\"]\n\ttextconv = " + f.hook("textconv") + "\n" }
	credential := "protocol=https\nhost=example.com\n\n"
	cases := []gitHookCase{{
		name:  "core.fsmonitor on status",
		setup: func(f *gitFixture) []string { f.appendConfig(".git/config", fsmonitor(f)); return nil },
		args:  []string{"status"}, hooks: []string{"fsmonitor"},
	}, {
		name: "core.fsmonitor in config.worktree",
		setup: func(f *gitFixture) []string {
			f.appendConfig(".git/config", "[extensions]\n\tworktreeConfig = true\n")
			f.appendConfig(".git/config.worktree", fsmonitor(f))
			return nil
		},
		args: []string{"diff"}, hooks: []string{"fsmonitor"},
	}, {
		name: "core.fsmonitor in an included file",
		setup: func(f *gitFixture) []string {
			inc := filepath.Join(f.hooks, "included.cfg")
			if err := os.WriteFile(inc, []byte(fsmonitor(f)), 0o644); err != nil {
				f.t.Fatal(err)
			}
			f.appendConfig(".git/config", "[include]\n\tpath = "+inc+"\n")
			return nil
		},
		args: []string{"status"}, hooks: []string{"fsmonitor"}, reason: "include.path",
	}, {
		// Global and system config are dropped as a whole, so a driver
		// defined there does not run either.
		name: "diff textconv in HOME/.gitconfig",
		setup: func(f *gitFixture) []string {
			if err := os.WriteFile(filepath.Join(f.home, ".gitconfig"), []byte(textconv(f)), 0o644); err != nil {
				f.t.Fatal(err)
			}
			return nil
		},
		args: []string{"show"}, hooks: []string{"textconv"},
	}, {
		name: "filter clean in XDG config",
		setup: func(f *gitFixture) []string {
			p := filepath.Join(f.home, ".config", "git", "config")
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				f.t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte("[filter \"evil\"]\n\tclean = "+f.hook("clean")+"\n"), 0o644); err != nil {
				f.t.Fatal(err)
			}
			f.write("f.txt", "WORLD\n")
			return nil
		},
		args: []string{"status"}, hooks: []string{"clean"},
	}, {
		name: "diff textconv in system config",
		setup: func(f *gitFixture) []string {
			p := filepath.Join(f.home, "system.cfg")
			if err := os.WriteFile(p, []byte(textconv(f)), 0o644); err != nil {
				f.t.Fatal(err)
			}
			return []string{"GIT_CONFIG_NOSYSTEM=0", "GIT_CONFIG_SYSTEM=" + p}
		},
		args: []string{"log", "-p", "-1"}, hooks: []string{"textconv"},
	}, {
		name: "core.fsmonitor in inherited GIT_CONFIG_PARAMETERS",
		setup: func(f *gitFixture) []string {
			return []string{"GIT_CONFIG_PARAMETERS='core.fsmonitor'='" + f.hook("fsmonitor") + "'"}
		},
		args: []string{"status"}, hooks: []string{"fsmonitor"},
	}, {
		name: "core.fsmonitor of a submodule",
		setup: func(f *gitFixture) []string {
			f.embeddedRepo("inner")
			f.appendConfig("inner/.git/config", fsmonitor(f))
			f.write("inner/in.txt", "two\n")
			return nil
		},
		args: []string{"status"}, hooks: []string{"fsmonitor"},
	}, {
		name: "post-index-change hook in .git/hooks on status",
		setup: func(f *gitFixture) []string {
			f.script(filepath.Join(f.ws, ".git", "hooks", "post-index-change"), f.marker("post-index-change"))
			f.touchLater("f.txt")
			return nil
		},
		args: []string{"status"}, hooks: []string{"post-index-change"},
	}, {
		name: "core.hooksPath pre-commit",
		setup: func(f *gitFixture) []string {
			dir := filepath.Join(f.hooks, "hookdir")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				f.t.Fatal(err)
			}
			f.script(filepath.Join(dir, "pre-commit"), f.marker("pre-commit"))
			f.appendConfig(".git/config", "[core]\n\thooksPath = "+dir+"\n")
			return nil
		},
		args: []string{"commit", "-q", "--allow-empty", "-m", "x"}, hooks: []string{"pre-commit"},
	}, {
		name: ".git/hooks pre-commit",
		setup: func(f *gitFixture) []string {
			f.script(filepath.Join(f.ws, ".git", "hooks", "pre-commit"), f.marker("pre-commit"))
			return nil
		},
		args: []string{"commit", "-q", "--allow-empty", "-m", "x"}, hooks: []string{"pre-commit"},
	}, {
		name: "core.editor",
		setup: func(f *gitFixture) []string {
			f.appendConfig(".git/config", "[core]\n\teditor = "+f.hook("editor")+"\n")
			return nil
		},
		args: []string{"commit", "--allow-empty"}, hooks: []string{"editor"},
	}, {
		name: "sequence.editor",
		setup: func(f *gitFixture) []string {
			f.appendConfig(".git/config", "[sequence]\n\teditor = "+f.hook("seqeditor")+"\n")
			return nil
		},
		args: []string{"rebase", "-i", "HEAD"}, hooks: []string{"seqeditor"},
	}, {
		name: "credential.helper, per-URL helper and core.askPass",
		setup: func(f *gitFixture) []string {
			f.appendConfig(".git/config", "[credential]\n\thelper = !"+f.hook("helper")+"\n"+
				"[credential \"https://example.com\"]\n\thelper = "+f.hook("urlhelper")+"\n"+
				"[core]\n\taskPass = "+f.hook("askpass")+"\n")
			return nil
		},
		args: []string{"credential", "fill"}, stdin: credential, hooks: []string{"helper", "urlhelper", "askpass"},
	}, {
		name:  "inherited SSH_ASKPASS",
		setup: func(f *gitFixture) []string { return []string{"SSH_ASKPASS=" + f.hook("sshaskpass")} },
		args:  []string{"credential", "fill"}, stdin: credential, hooks: []string{"sshaskpass"},
	}, {
		name: "core.sshCommand",
		setup: func(f *gitFixture) []string {
			f.appendConfig(".git/config", "[core]\n\tsshCommand = "+f.hook("sshcommand")+"\n")
			return nil
		},
		args: []string{"ls-remote", "ssh://git@example.invalid/r"}, hooks: []string{"sshcommand"}, defaults: []string{"default-ssh"},
	}, {
		name: "core.gitProxy",
		setup: func(f *gitFixture) []string {
			f.appendConfig(".git/config", "[core]\n\tgitProxy = "+f.hook("gitproxy")+"\n")
			return nil
		},
		args: []string{"ls-remote", "git://127.0.0.1:1/r"}, hooks: []string{"gitproxy"},
	}, {
		name: "protocol.ext.allow",
		setup: func(f *gitFixture) []string {
			f.hook("ext")
			f.appendConfig(".git/config", "[protocol \"ext\"]\n\tallow = always\n")
			return nil
		},
		args: []string{"ls-remote", "ext::{hook:ext}"}, hooks: []string{"ext"},
	}, {
		name: "gpg.program on %G?",
		setup: func(f *gitFixture) []string {
			f.appendConfig(".git/config", "[gpg]\n\tprogram = "+f.hook("gpg")+"\n")
			return nil
		},
		args: []string{"log", "-1", "--format=%G?", "{signed:PGP SIGNATURE}"}, hooks: []string{"gpg"}, defaults: []string{"default-gpg"},
	}, {
		name: "gpg.openpgp.program with log.showSignature",
		setup: func(f *gitFixture) []string {
			f.appendConfig(".git/config", "[log]\n\tshowSignature = true\n[gpg \"openpgp\"]\n\tprogram = "+f.hook("gpg")+"\n")
			return nil
		},
		args: []string{"log", "-1", "{signed:PGP SIGNATURE}"}, hooks: []string{"gpg"}, defaults: []string{"default-gpg"},
	}, {
		name: "gpg.x509.program",
		setup: func(f *gitFixture) []string {
			f.appendConfig(".git/config", "[gpg \"x509\"]\n\tprogram = "+f.hook("gpgsm")+"\n")
			return nil
		},
		args: []string{"show", "-s", "--format=%G?", "{signed:SIGNED MESSAGE}"}, hooks: []string{"gpgsm"}, defaults: []string{"default-gpgsm"},
	}, {
		name: "gpg.ssh.program",
		setup: func(f *gitFixture) []string {
			signers := filepath.Join(f.hooks, "allowed_signers")
			if err := os.WriteFile(signers, nil, 0o644); err != nil {
				f.t.Fatal(err)
			}
			f.appendConfig(".git/config", "[gpg \"ssh\"]\n\tprogram = "+f.hook("sshkeygen")+"\n\tallowedSignersFile = "+signers+"\n")
			return nil
		},
		args: []string{"log", "-1", "--show-signature", "{signed:SSH SIGNATURE}"}, hooks: []string{"sshkeygen"}, defaults: []string{"default-ssh-keygen"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newGitFixture(t)
			extra := tc.setup(f)
			args := f.expand(tc.args)
			control := append(f.baseEnv(), extra...)
			// The protected run goes first, so the state it meets is the
			// one the control run then proves live.
			f.clearMarkers()
			safeOut, _ := f.run(safeEnv(control), f.ws, tc.stdin, args...)
			var ranSafe, ranDefault []string
			for _, h := range tc.hooks {
				if f.ran(h) {
					ranSafe = append(ranSafe, h)
				}
			}
			for _, d := range tc.defaults {
				if f.ran(d) {
					ranDefault = append(ranDefault, d)
				}
			}
			f.clearMarkers()
			out, _ := f.run(control, f.ws, tc.stdin, args...)
			for _, h := range tc.hooks {
				if !f.ran(h) {
					t.Fatalf("control: git %v did not run %s, so the case proves nothing\n%s", args, h, out)
				}
			}
			if len(ranSafe) > 0 {
				t.Errorf("with gitSafetyEnv, git %v still ran %v\n%s", args, ranSafe, safeOut)
			}
			if !slices.Equal(ranDefault, tc.defaults) {
				t.Errorf("with gitSafetyEnv, git %v ran defaults %v, want %v\n%s", args, ranDefault, tc.defaults, safeOut)
			}
			got := gitRunsRepoPrograms(f.ws, f.ws)
			if tc.reason == "" && got != "" {
				t.Errorf("neutralised configuration reported: %q", got)
			}
			if tc.reason != "" && !strings.Contains(got, tc.reason) {
				t.Errorf("reason %q, want it to mention %q", got, tc.reason)
			}
		})
	}
}

// expand replaces {hook:NAME} in args by the path of hook script NAME and
// {signed:ARMOUR} by a commit signed with that armour type.
func (f *gitFixture) expand(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		switch {
		case strings.HasPrefix(a, "{signed:"):
			a = f.signedCommit(strings.TrimSuffix(strings.TrimPrefix(a, "{signed:"), "}"))
		case strings.Contains(a, "{hook:"):
			pre, rest, _ := strings.Cut(a, "{hook:")
			name, post, _ := strings.Cut(rest, "}")
			a = pre + filepath.Join(f.hooks, name) + post
		}
		out[i] = a
	}
	return out
}

// TestGitSafetyEnvPager: GIT_PAGER outranks core.pager and pager.<cmd>.
// git only pages to a terminal, so the live check runs git under script(1)
// when it is available.
func TestGitSafetyEnvPager(t *testing.T) {
	f := newGitFixture(t)
	pager := f.hook("pager")
	f.appendConfig(".git/config", "[core]\n\tpager = "+pager+"\n")
	if out, _ := f.run(f.baseEnv(), f.ws, "", "var", "GIT_PAGER"); strings.TrimSpace(out) != pager {
		t.Fatalf("control: git var GIT_PAGER = %q, want %q", out, pager)
	}
	if out, _ := f.run(safeEnv(f.baseEnv()), f.ws, "", "var", "GIT_PAGER"); strings.TrimSpace(out) != "cat" {
		t.Errorf("with gitSafetyEnv: git var GIT_PAGER = %q, want cat", out)
	}
	if got := gitRunsRepoPrograms(f.ws, f.ws); got != "" {
		t.Errorf("core.pager reported: %q", got)
	}

	script, err := exec.LookPath("script")
	if err != nil {
		t.Skip("script(1) is not available for a terminal")
	}
	f.appendConfig(".git/config", "[pager]\n\tshow = "+f.hook("pagershow")+"\n")
	tty := func(env []string, sub string) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, script, "-qec", "git "+sub, "/dev/null")
		cmd.Dir, cmd.Env = f.ws, env
		_ = cmd.Run()
	}
	f.clearMarkers()
	tty(f.baseEnv(), "log")
	tty(f.baseEnv(), "show")
	if !f.ran("pager") || !f.ran("pagershow") {
		t.Skip("no pager ran under script(1): no usable terminal here")
	}
	f.clearMarkers()
	tty(safeEnv(f.baseEnv()), "log")
	tty(safeEnv(f.baseEnv()), "show")
	if f.ran("pager") || f.ran("pagershow") {
		t.Errorf("with gitSafetyEnv a pager ran on a terminal (core.pager %v, pager.show %v)", f.ran("pager"), f.ran("pagershow"))
	}
}

// TestGitRunsRepoProgramsDrivers: what the overrides cannot reach still
// runs under gitSafetyEnv, and gitRunsRepoPrograms reports it.
func TestGitRunsRepoProgramsDrivers(t *testing.T) {
	cases := []struct {
		name   string
		setup  func(f *gitFixture)
		args   []string
		reason string
	}{{
		name: "filter clean on status",
		setup: func(f *gitFixture) {
			f.appendConfig(".git/config", "[filter \"evil\"]\n\tclean = "+f.hook("drv")+"\n")
			f.write("f.txt", "WORLD\n") // same size: status must hash it
		},
		args: []string{"status"}, reason: "filter.evil.clean",
	}, {
		name: "filter process on status",
		setup: func(f *gitFixture) {
			f.appendConfig(".git/config", "[filter.evil]\n\tprocess = "+f.hook("drv")+"\n")
			f.write("f.txt", "WORLD\n")
		},
		args: []string{"status"}, reason: "filter.evil.process",
	}, {
		name: "diff textconv on diff",
		setup: func(f *gitFixture) {
			f.appendConfig(".git/config", "[diff \"evil\"]\n\ttextconv = "+f.hook("drv")+"\n")
			f.write("f.txt", "changed\n")
		},
		args: []string{"diff"}, reason: "diff.evil.textconv",
	}, {
		name: "diff textconv on log -p",
		setup: func(f *gitFixture) {
			f.appendConfig(".git/config", "[Diff \"evil\"]\n\tTextConv = "+f.hook("drv")+"\n")
		},
		args:   []string{"log", "-p"},
		reason: "diff.evil.textconv",
	}, {
		name:   "diff textconv on show",
		setup:  func(f *gitFixture) { f.appendConfig(".git/config", "[diff \"evil\"] textconv = "+f.hook("drv")+"\n") },
		args:   []string{"show"},
		reason: "diff.evil.textconv",
	}, {
		name: "diff driver command on diff",
		setup: func(f *gitFixture) {
			f.appendConfig(".git/config", "[diff \"evil\"]\n\tcommand = "+f.hook("drv")+"\n")
			f.write("f.txt", "changed\n")
		},
		args: []string{"diff"}, reason: "diff.evil.command",
	}, {
		name: "diff.external on diff",
		setup: func(f *gitFixture) {
			f.appendConfig(".git/config", "[diff]\n\texternal = "+f.hook("drv")+"\n")
			f.write("f.txt", "changed\n")
		},
		args: []string{"diff"}, reason: "diff.external",
	}, {
		name: "include.path defining a textconv",
		setup: func(f *gitFixture) {
			inc := filepath.Join(f.hooks, "inc.cfg")
			if err := os.WriteFile(inc, []byte("[diff \"evil\"]\n\ttextconv = "+f.hook("drv")+"\n"), 0o644); err != nil {
				f.t.Fatal(err)
			}
			f.appendConfig(".git/config", "[include]\n\tpath = "+inc+"\n")
		},
		args: []string{"show"}, reason: "include.path",
	}, {
		name: "includeIf defining a textconv",
		setup: func(f *gitFixture) {
			inc := filepath.Join(f.hooks, "inc.cfg")
			if err := os.WriteFile(inc, []byte("[diff \"evil\"]\n\ttextconv = "+f.hook("drv")+"\n"), 0o644); err != nil {
				f.t.Fatal(err)
			}
			f.appendConfig(".git/config", "[includeIf \"gitdir:/\"]\n\tpath = "+inc+"\n")
		},
		args: []string{"log", "-p", "-1"}, reason: "includeif.gitdir:/.path",
	}, {
		name: "filter clean of a submodule on status",
		setup: func(f *gitFixture) {
			f.embeddedRepo("inner")
			f.appendConfig("inner/.git/config", "[filter \"evil\"]\n\tclean = "+f.hook("drv")+"\n")
			f.write("inner/in.txt", "ONE\n")
		},
		args: []string{"status"}, reason: "inner/.git/config",
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newGitFixture(t)
			tc.setup(f)
			f.clearMarkers()
			out, _ := f.run(safeEnv(f.baseEnv()), f.ws, "", tc.args...)
			if !f.ran("drv") {
				t.Errorf("git %v did not run the driver even without the check; the case proves nothing\n%s", tc.args, out)
			}
			got := gitRunsRepoPrograms(f.ws, f.ws)
			if !strings.Contains(got, tc.reason) || got == "" {
				t.Errorf("reason %q, want it to mention %q", got, tc.reason)
			}
			if sub := filepath.Join(f.ws, "sub", "dir"); os.MkdirAll(sub, 0o755) == nil {
				if again := gitRunsRepoPrograms(f.ws, sub); again != got {
					t.Errorf("from a subdirectory: %q, want %q", again, got)
				}
			}
		})
	}
}

// TestGitRunsRepoProgramsDiscovery: finding the repository git would use,
// and the git directories that leave the workspace.
func TestGitRunsRepoProgramsDiscovery(t *testing.T) {
	gitRequire(t)
	evil := "[filter \"x\"]\n\tclean = evil\n"

	t.Run("no repository", func(t *testing.T) {
		f := newGitFixture(t)
		plain := filepath.Join(filepath.Dir(f.ws), "plain")
		if err := os.MkdirAll(plain, 0o755); err != nil {
			t.Fatal(err)
		}
		if out, err := f.run(f.baseEnv(), plain, "", "rev-parse", "--git-dir"); err == nil {
			t.Skipf("a repository encloses the temporary directory: %s", out)
		}
		if got := gitRunsRepoPrograms(plain, plain); got != "" {
			t.Errorf("reason %q", got)
		}
	})
	t.Run("subdirectory of a hostile repository", func(t *testing.T) {
		f := newGitFixture(t)
		f.appendConfig(".git/config", evil)
		sub := filepath.Join(f.ws, "a", "b")
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		if got := gitRunsRepoPrograms(f.ws, sub); !strings.Contains(got, ".git/config") {
			t.Errorf("reason %q", got)
		}
		if got := gitRunsRepoPrograms(f.ws, "a/b"); !strings.Contains(got, "filter.x.clean") {
			t.Errorf("relative cwd: reason %q", got)
		}
	})
	t.Run("workspace inside a hostile repository", func(t *testing.T) {
		f := newGitFixture(t)
		f.appendConfig(".git/config", evil)
		ws := filepath.Join(f.ws, "project")
		if err := os.MkdirAll(ws, 0o755); err != nil {
			t.Fatal(err)
		}
		if got := gitRunsRepoPrograms(ws, ws); !strings.Contains(got, "filter.x.clean") {
			t.Errorf("reason %q", got)
		}
	})
	t.Run("invalid .git directory is skipped like git does", func(t *testing.T) {
		f := newGitFixture(t)
		f.appendConfig(".git/config", evil)
		sub := filepath.Join(f.ws, "sub")
		if err := os.MkdirAll(filepath.Join(sub, ".git"), 0o755); err != nil {
			t.Fatal(err)
		}
		if out := f.git(sub, "rev-parse", "--show-toplevel"); gitRealPath(out) != gitRealPath(f.ws) {
			t.Fatalf("git uses %s, the test expects the outer repository", out)
		}
		if got := gitRunsRepoPrograms(f.ws, sub); !strings.Contains(got, "filter.x.clean") {
			t.Errorf("reason %q", got)
		}
	})
	t.Run("separate git dir inside the workspace", func(t *testing.T) {
		f := newGitFixture(t)
		wt, meta := filepath.Join(f.ws, "wt"), filepath.Join(f.ws, "meta")
		f.git(f.ws, "init", "-q", "--separate-git-dir", meta, wt)
		if got := gitRunsRepoPrograms(f.ws, wt); got != "" {
			t.Errorf("clean: reason %q", got)
		}
		f.appendConfig("meta/config", evil)
		if got := gitRunsRepoPrograms(f.ws, wt); !strings.Contains(got, "meta/config") {
			t.Errorf("hostile: reason %q", got)
		}
	})
	t.Run(".git file pointing outside the workspace", func(t *testing.T) {
		f := newGitFixture(t)
		wt, meta := filepath.Join(f.ws, "wt"), filepath.Join(f.hooks, "meta")
		f.git(f.ws, "init", "-q", "--separate-git-dir", meta, wt)
		if got := gitRunsRepoPrograms(wt, wt); !strings.Contains(got, "outside the workspace") {
			t.Errorf("reason %q", got)
		}
	})
	t.Run(".git symlink pointing outside the workspace", func(t *testing.T) {
		f := newGitFixture(t)
		wt := filepath.Join(filepath.Dir(f.ws), "ws2")
		if err := os.MkdirAll(wt, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(f.ws, ".git"), filepath.Join(wt, ".git")); err != nil {
			t.Skip(err)
		}
		if got := gitRunsRepoPrograms(wt, wt); !strings.Contains(got, "outside the workspace") {
			t.Errorf("reason %q", got)
		}
	})
	t.Run("linked worktrees", func(t *testing.T) {
		f := newGitFixture(t)
		inside := filepath.Join(f.ws, "wt-in")
		f.git(f.ws, "worktree", "add", "-q", inside)
		if got := gitRunsRepoPrograms(f.ws, inside); got != "" {
			t.Errorf("worktree inside, clean: reason %q", got)
		}
		outside := filepath.Join(filepath.Dir(f.ws), "wt-out")
		f.git(f.ws, "worktree", "add", "-q", outside)
		if got := gitRunsRepoPrograms(outside, outside); !strings.Contains(got, "outside the workspace") {
			t.Errorf("worktree of a repository outside: reason %q", got)
		}
		f.appendConfig(".git/config", evil)
		if got := gitRunsRepoPrograms(f.ws, inside); !strings.Contains(got, "filter.x.clean") {
			t.Errorf("hostile main config seen from a worktree: reason %q", got)
		}
	})
	t.Run("bare repository as cwd", func(t *testing.T) {
		f := newGitFixture(t)
		bare := filepath.Join(f.ws, "b.git")
		f.git(f.ws, "init", "-q", "--bare", bare)
		if got := gitRunsRepoPrograms(f.ws, bare); got != "" {
			t.Errorf("clean: reason %q", got)
		}
		f.appendConfig("b.git/config", "[diff \"d\"]\n\ttextconv = evil\n")
		if got := gitRunsRepoPrograms(f.ws, filepath.Join(bare, "refs")); !strings.Contains(got, "diff.d.textconv") {
			t.Errorf("hostile: reason %q", got)
		}
	})
	t.Run("inside the .git directory", func(t *testing.T) {
		f := newGitFixture(t)
		f.appendConfig(".git/config", evil)
		if got := gitRunsRepoPrograms(f.ws, filepath.Join(f.ws, ".git", "objects")); !strings.Contains(got, "filter.x.clean") {
			t.Errorf("reason %q", got)
		}
	})
	t.Run("unparseable config fails closed", func(t *testing.T) {
		f := newGitFixture(t)
		f.appendConfig(".git/config", "[core\n")
		if _, err := f.run(f.baseEnv(), f.ws, "", "status"); err == nil {
			t.Fatal("git accepts the broken config")
		}
		if got := gitRunsRepoPrograms(f.ws, f.ws); !strings.Contains(got, "cannot parse") {
			t.Errorf("reason %q", got)
		}
	})
	t.Run("malformed .git file fails closed", func(t *testing.T) {
		f := newGitFixture(t)
		sub := filepath.Join(f.ws, "sub")
		f.write("sub/.git", "gitdir ../x\n")
		if got := gitRunsRepoPrograms(f.ws, sub); !strings.Contains(got, "cannot parse the .git file") {
			t.Errorf("reason %q", got)
		}
	})
	t.Run("config that is a FIFO fails closed without blocking", func(t *testing.T) {
		f := newGitFixture(t)
		mkfifo, err := exec.LookPath("mkfifo")
		if err != nil {
			t.Skip("mkfifo not available")
		}
		cfg := filepath.Join(f.ws, ".git", "config.worktree")
		if out, err := exec.Command(mkfifo, cfg).CombinedOutput(); err != nil {
			t.Skipf("mkfifo: %v %s", err, out)
		}
		if got := gitRunsRepoPrograms(f.ws, f.ws); !strings.Contains(got, "not a regular file") {
			t.Errorf("reason %q", got)
		}
	})
	t.Run("core.worktree outside the workspace", func(t *testing.T) {
		f := newGitFixture(t)
		f.appendConfig(".git/config", "[core]\n\tworktree = "+f.home+"\n")
		if got := gitRunsRepoPrograms(f.ws, f.ws); !strings.Contains(got, "core.worktree outside") {
			t.Errorf("reason %q", got)
		}
	})
	t.Run("submodule via .git file into .git/modules", func(t *testing.T) {
		f := newGitFixture(t)
		inner := f.embeddedRepo("inner")
		modules := filepath.Join(f.ws, ".git", "modules", "inner")
		if err := os.MkdirAll(filepath.Dir(modules), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(inner, ".git"), modules); err != nil {
			t.Fatal(err)
		}
		f.write("inner/.git", "gitdir: ../.git/modules/inner\n")
		f.git(inner, "status") // git accepts the layout
		if got := gitRunsRepoPrograms(f.ws, f.ws); got != "" {
			t.Errorf("clean: reason %q", got)
		}
		f.appendConfig(".git/modules/inner/config", evil)
		if got := gitRunsRepoPrograms(f.ws, f.ws); !strings.Contains(got, ".git/modules/inner/config") {
			t.Errorf("hostile: reason %q", got)
		}
	})
	t.Run("submodule cycle terminates", func(t *testing.T) {
		f := newGitFixture(t)
		f.embeddedRepo("inner")
		if err := os.RemoveAll(filepath.Join(f.ws, "inner", ".git")); err != nil {
			t.Fatal(err)
		}
		f.write("inner/.git", "gitdir: ../.git\n") // the submodule is the superproject
		if got := gitRunsRepoPrograms(f.ws, f.ws); got != "" {
			t.Errorf("reason %q", got)
		}
	})
	t.Run("unknown workspace root", func(t *testing.T) {
		if got := gitRunsRepoPrograms("", "/"); got == "" {
			t.Error("no reason")
		}
	})
}

func TestGitConfigParse(t *testing.T) {
	cases := []struct {
		name, in string
		want     []string // name=value, or name without = for no value
		err      bool
	}{
		{name: "empty", in: "", want: nil},
		{name: "section and key case", in: "[Core]\n\tFSMonitor = x\n", want: []string{"core.fsmonitor=x"}},
		{name: "subsection keeps case", in: "[Filter \"Evil\"]\nClean=a\n", want: []string{"filter.Evil.clean=a"}},
		{name: "dotted subsection lower-cased", in: "[filter.Evil]\nclean=a\n", want: []string{"filter.evil.clean=a"}},
		{name: "subsection with dots and escapes", in: `[diff "a.b\"c\\d\q"]` + "\ntextconv=x\n", want: []string{`diff.a.b"c\dq.textconv=x`}},
		{name: "entry on the header line", in: "[diff \"x\"] textconv = evil\n", want: []string{"diff.x.textconv=evil"}},
		{name: "no value is boolean", in: "[core]\n\tbare\n", want: []string{"core.bare"}},
		{name: "empty value", in: "[credential]\nhelper =\n", want: []string{"credential.helper="}},
		{name: "comments", in: "# c\n; c\n[a] ; c\nb = 1 # trailing\nc = \"2 # kept\" ; gone\n", want: []string{"a.b=1", "a.c=2 # kept"}},
		{name: "blanks trimmed, each inner one a space", in: "[a]\nb =   x \t y  \n", want: []string{"a.b=x   y"}},
		{name: "quoted blanks kept", in: "[a]\nb = \"  x \"\n", want: []string{"a.b=  x "}},
		{name: "escapes", in: "[a]\nb = 1\\t2\\n3\\b4\\\\5\\\"6\n", want: []string{"a.b=1\t2\n3\b4\\5\"6"}},
		{name: "continuation", in: "[a]\nb = one \\\n  two\nc = 3\n", want: []string{"a.b=one   two", "a.c=3"}},
		{name: "continuation inside quotes", in: "[a]\nb = \"x\\\ny\"\n", want: []string{"a.b=xy"}},
		{name: "CRLF", in: "[a]\r\nb = 1\r\nc\r\n", want: []string{"a.b=1", "a.c"}},
		{name: "BOM", in: "\xEF\xBB\xBF[a]\nb=1\n", want: []string{"a.b=1"}},
		{name: "no final newline", in: "[a]\nb=1", want: []string{"a.b=1"}},
		{name: "key before any section", in: "b=1\n", want: []string{"b=1"}},
		{name: "section with space before subsection", in: "[a   \"s\"]\nb=1\n", want: []string{"a.s.b=1"}},
		{name: "keys with digits and dashes", in: "[a]\nb-2c = 1\n", want: []string{"a.b-2c=1"}},
		{name: "include", in: "[include]\npath = other\n[includeIf \"gitdir:~/x/\"]\npath = y\n", want: []string{"include.path=other", "includeif.gitdir:~/x/.path=y"}},
		{name: "unterminated header", in: "[core\n", err: true},
		{name: "empty header", in: "[]\n", err: true},
		{name: "bad header character", in: "[co re]\n", err: true},
		{name: "subsection without quotes", in: "[a b]\n", err: true},
		{name: "unterminated subsection", in: "[a \"b]\n", err: true},
		{name: "junk after subsection", in: "[a \"b\" ]\n", err: true},
		{name: "key without =", in: "[a]\nb c\n", err: true},
		{name: "key then comment", in: "[a]\nb # c\n", err: true},
		{name: "key starting with digit", in: "[a]\n1b = c\n", err: true},
		{name: "unterminated quote", in: "[a]\nb = \"c\n", err: true},
		{name: "bad escape", in: "[a]\nb = c\\q\n", err: true},
		{name: "partial BOM", in: "\xEF\xBB[a]\n", err: true},
		{name: "NUL byte", in: "[a]\n\x00b=1\n", err: true},
		{name: "NUL byte in subsection", in: "[diff \"x.textconv\x00\"]\ny = evil\n", err: true},
		{name: "lone CR in key", in: "[a]\nb\rc=1\n", err: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			entries, err := parseGitConfig([]byte(tc.in))
			if tc.err {
				if err == nil {
					t.Fatalf("parsed %q as %v, want an error", tc.in, entries)
				}
				return
			}
			if err != nil {
				t.Fatalf("parse %q: %v", tc.in, err)
			}
			var got []string
			for _, e := range entries {
				s := e.Name
				if e.HasValue {
					s += "=" + e.Value
				}
				got = append(got, s)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestGitConfigParseMatchesGit: every accepted case of the reader reads the
// same with git config --list, and git rejects what the reader rejects.
func TestGitConfigParseMatchesGit(t *testing.T) {
	gitRequire(t)
	dir := t.TempDir()
	inputs := []string{
		"[Core]\n\tFSMonitor = x\n",
		"[filter.Evil]\nclean=a\n",
		"[Filter \"Evil\"]\nClean=a\n",
		"[diff \"x\"] textconv = evil\n",
		"# c\n; c\n[a] ; c\nb = 1 # trailing\nc = \"2 # kept\" ; gone\n",
		"[a]\nb =   x \t y  \n",
		"[a]\nb = one \\\n  two\nc = 3\n",
		"[a]\r\nb = 1\r\nc\r\n",
		"\xEF\xBB\xBF[a]\nb=1\n",
		"[a   \"s\"]\nb=1",
		"[a \"b.c\"]\nd=1\n",
		"[core\n",
		"[a]\nb c\n",
		"[a]\nb # c\n",
		"[a]\nb = \"c\n",
		"[a]\nb = c\\q\n",
		"[a \"b\" ]\n",
	}
	for i, in := range inputs {
		p := filepath.Join(dir, strconv.Itoa(i))
		if err := os.WriteFile(p, []byte(in), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("git", "config", "--file", p, "--list", "--null")
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1"}
		out, gitErr := cmd.Output()
		entries, err := parseGitConfig([]byte(in))
		if (gitErr != nil) != (err != nil) {
			t.Errorf("%q: git error %v, reader error %v", in, gitErr, err)
			continue
		}
		if err != nil {
			continue
		}
		var want []string
		for _, rec := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
			if rec == "" {
				continue
			}
			name, value, ok := strings.Cut(rec, "\n")
			if ok {
				name += "=" + value
			}
			want = append(want, name)
		}
		var got []string
		for _, e := range entries {
			s := e.Name
			if e.HasValue {
				s += "=" + e.Value
			}
			got = append(got, s)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%q: reader %q, git %q", in, got, want)
		}
	}
}

func TestGitConfigReasons(t *testing.T) {
	cases := []struct{ in, want string }{
		{"[core]\n\trepositoryformatversion = 0\n\tbare = false\n", ""},
		// Neutralised by gitSafetyEnv.
		{"[core]\nfsmonitor = x\nhooksPath = x\npager = x\neditor = x\naskPass = x\nsshCommand = x\ngitProxy = x\n", ""},
		{"[credential]\nhelper = x\n[credential \"https://h\"]\nhelper = y\n[gpg]\nprogram = x\n[gpg \"ssh\"]\nprogram = x\n", ""},
		{"[pager]\nlog = x\n[sequence]\neditor = x\n[protocol \"ext\"]\nallow = always\n", ""},
		// Harmless lookalikes.
		{"[filter \"lfs\"]\nrequired = true\n[diff \"x\"]\nxfuncname = y\nbinary = true\n[merge \"m\"]\nname = n\n", ""},
		{"[remote \"origin\"]\nurl = x\n[branch \"main\"]\nmerge = refs/heads/main\n", ""},
		// Reported.
		{"[filter \"lfs\"]\nclean = git-lfs clean -- %f\n", "filter.lfs.clean (line 2)"},
		{"[filter \"x\"]\nsmudge = y\n", "filter.x.smudge"},
		{"[filter \"x\"]\nprocess = y\n", "filter.x.process"},
		{"[FILTER.X]\nCLEAN = y\n", "filter.x.clean"},
		{"[diff \"x\"]\ntextconv = y\n", "diff.x.textconv"},
		{"[diff \"x\"]\ncommand = y\n", "diff.x.command"},
		{"[diff]\nexternal = y\n", "diff.external"},
		{"[merge \"x\"]\ndriver = y\n", "merge.x.driver"},
		{"[include]\npath = y\n", "include.path"},
		{"[includeIf \"onbranch:main\"]\npath = y\n", "includeif.onbranch:main.path"},
		{"[diff \"a\x1b[31m\"]\ntextconv = y\n", "diff.a?[31m.textconv"},
	}
	for _, tc := range cases {
		entries, err := parseGitConfig([]byte(tc.in))
		if err != nil {
			t.Fatalf("%q: %v", tc.in, err)
		}
		got := gitConfigReason(entries)
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("%q: reason %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestGitIndexGitlinks reads gitlinks from indexes git wrote in each
// format and compares them with git ls-files.
func TestGitIndexGitlinks(t *testing.T) {
	variants := []struct {
		name    string
		init    []string
		after   [][]string
		version byte
	}{
		{name: "v2", after: [][]string{{"update-index", "--index-version", "2"}}, version: 2},
		{name: "v3 extended flags", after: [][]string{{"add", "-N", "new.txt"}}, version: 3},
		{name: "v4 path compression", after: [][]string{{"update-index", "--index-version", "4"}}, version: 4},
		{name: "split index", after: [][]string{{"update-index", "--split-index"}, {"update-index", "--add", "--cacheinfo", "160000,HEAD,split/late"}}, version: 2},
		{name: "sha256", init: []string{"--object-format=sha256"}, version: 2},
	}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			gitRequire(t)
			f := &gitFixture{t: t, ws: t.TempDir(), home: t.TempDir(), bin: t.TempDir()}
			f.git(f.ws, append([]string{"init", "-q"}, v.init...)...)
			f.write("a.txt", "a\n")
			f.write("new.txt", "n\n")
			f.git(f.ws, "add", "a.txt")
			f.git(f.ws, "commit", "-q", "-m", "a")
			head := f.git(f.ws, "rev-parse", "HEAD")
			long := "deep/" + strings.Repeat("x", 5000)
			for _, p := range []string{"sub/one", "sub/two", "zz", long} {
				f.git(f.ws, "update-index", "--add", "--cacheinfo", "160000,"+head+","+p)
			}
			for _, a := range v.after {
				for i := range a {
					a[i] = strings.ReplaceAll(a[i], "HEAD", head)
				}
				f.git(f.ws, a...)
			}
			var want []string
			for _, line := range strings.Split(f.git(f.ws, "ls-files", "-s"), "\n") {
				if meta, path, ok := strings.Cut(line, "\t"); ok && strings.HasPrefix(meta, "160000 ") {
					want = append(want, path)
				}
			}
			hashLen := len(head) / 2
			gitdir := filepath.Join(f.ws, ".git")
			data, err := os.ReadFile(filepath.Join(gitdir, "index"))
			if err != nil {
				t.Fatal(err)
			}
			if data[7] != v.version {
				t.Fatalf("git wrote index version %d, the case wants %d", data[7], v.version)
			}
			got, shared, err := gitIndexGitlinks(data, hashLen)
			if err != nil {
				t.Fatal(err)
			}
			if shared != "" {
				data, err := os.ReadFile(filepath.Join(gitdir, "sharedindex."+shared))
				if err != nil {
					t.Fatal(err)
				}
				more, _, err := gitIndexGitlinks(data, hashLen)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, more...)
			} else if v.name == "split index" {
				t.Fatal("split index without a shared index")
			}
			slices.Sort(got)
			got = slices.Compact(got)
			if !slices.Equal(got, want) {
				t.Errorf("gitlinks %q, want %q", got, want)
			}
			for cut := range len(data) { // never panics, and a cut header is an error
				if _, _, err := gitIndexGitlinks(data[:cut], hashLen); err == nil && cut < 12+hashLen {
					t.Errorf("truncated to %d bytes: no error", cut)
				}
			}
			if got := gitRunsRepoPrograms(f.ws, f.ws); got != "" {
				t.Errorf("reason %q", got)
			}
		})
	}
	if _, _, err := gitIndexGitlinks([]byte("DIRC\x00\x00\x00\x09\x00\x00\x00\x00"+strings.Repeat("\x00", 20)), 20); err == nil {
		t.Error("index version 9 accepted")
	}
	if _, _, err := gitIndexGitlinks([]byte("DIRC\x00\x00\x00\x02\x00\x00\x00\x05"+strings.Repeat("\x00", 20)), 20); err == nil {
		t.Error("index claiming 5 entries with none accepted")
	}
}

func TestGitlinkPathOK(t *testing.T) {
	for p, want := range map[string]bool{
		"sub": true, "a/b": true, "a-b/c.d": true,
		"": false, "/abs": false, "../up": false, "a/../../b": false, "a//b": false, "./a": false, "a/": false,
	} {
		if got := gitlinkPathOK(p); got != want {
			t.Errorf("gitlinkPathOK(%q) = %v, want %v", p, got, want)
		}
	}
}
