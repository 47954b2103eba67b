package cmdguard

import (
	"maps"
	"reflect"
	"slices"
	"testing"
)

// TestSensitiveTablePinned pins the spec's sensitive-name table (plus .git-credentials).
// The file tools decide with SensitivePath too.
func TestSensitiveTablePinned(t *testing.T) {
	sorted := func(m map[string]bool) []string { return slices.Sorted(maps.Keys(m)) }
	for name, tt := range map[string]struct {
		got  map[string]bool
		want []string
	}{
		"dirs":        {sensitiveDirs, []string{".aws", ".demiurge", ".git", ".kube", ".ssh", ".venv"}},
		"credentials": {credentialFiles, []string{".git-credentials", ".netrc", ".npmrc", ".pgpass", ".pypirc"}},
		"keys":        {privateKeyFiles, []string{"id_dsa", "id_ecdsa", "id_ed25519", "id_rsa"}},
		"write-only":  {writeSensitiveFiles, []string{"pyproject.toml", "uv.lock"}},
	} {
		if got := sorted(tt.got); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s = %q, want %q", name, got, tt.want)
		}
	}
}

func TestSensitivePath(t *testing.T) {
	sensitive := []string{".git", ".git/config", "sub/.git/HEAD", ".GIT/config", ".venv/bin/x", ".demiurge/x",
		".ssh/id_ed25519", "a/.ssh", ".aws/credentials", ".kube/config", ".env", ".env.local", ".envrc",
		"app/.ENV", ".env/x", ".netrc", "a/.npmrc", ".pgpass", ".pypirc", ".git-credentials", "a/.GIT-CREDENTIALS", "id_rsa", "keys/id_dsa", "id_ecdsa",
		"ID_ED25519", "server.pem", "tls/server.KEY", "x.key", "private_key.txt", "my-privatekey",
		"PrivateKey.json", "keyprivate"}
	benign := []string{"", ".", "README.md", ".gitignore", ".github/workflows/ci.yml", "git/config", "env",
		"x.env", "environment", "id_rsa.pub", "key.txt", "private.txt", "pem", "x.pem.txt", "keys/x",
		".netrc.bak", "pyproject.toml", "uv.lock", "config.yaml", "a.venv", "ssh/config"}
	for _, p := range sensitive {
		if !SensitivePath(p, false) || !SensitivePath(p, true) {
			t.Errorf("SensitivePath(%q) = false", p)
		}
	}
	for _, p := range benign {
		if SensitivePath(p, false) {
			t.Errorf("SensitivePath(%q, read) = true", p)
		}
	}
	for p, want := range map[string]bool{"pyproject.toml": true, "sub/UV.LOCK": true, "pyproject.toml.bak": false, "README.md": false} {
		if got := SensitivePath(p, true); got != want {
			t.Errorf("SensitivePath(%q, write) = %v, want %v", p, got, want)
		}
	}
	// The terminal review adds config.yaml for the terminal only.
	if !guardSensitive("config.yaml", false) || !guardSensitive("a/CONFIG.YAML/b", false) || guardSensitive("config.yml", false) {
		t.Error("guardSensitive and config.yaml")
	}
}

func TestPathCandidates(t *testing.T) {
	for w, want := range map[string][]string{
		"x":              {"x"},
		"/etc/passwd":    {"/etc/passwd"},
		"--file=.env":    {".env"},
		"--file":         nil,
		"-f":             nil,
		"-la":            nil,
		"-d/":            nil,
		"-t.":            nil,
		"-n5":            nil,
		"-C/etc":         {"/etc", "/etc"},
		"-X.netrc":       {".netrc", ".netrc"},
		"-nf/etc/passwd": {"f/etc/passwd", "/etc/passwd"},
		"-xy":            nil,
		"-":              nil,
		"-=x":            {"x"},
	} {
		got := pathCandidates(w)
		if len(got) == 0 && len(want) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("pathCandidates(%q) = %q, want %q", w, got, want)
		}
	}
}

func TestSensitiveWordsInCommands(t *testing.T) {
	hits := []string{"cat .env", "cat x .env", "cat .env x", "cat .ENV", "cat ./.env", "cat a/.env.local",
		"cat .git/config", "cat id_rsa", "cat ID_RSA", "cat server.key", "cat Server.PEM", "cat .ssh/config",
		"ls .aws", "cat .netrc", "cat my_private_key", "git show HEAD:.env", "git show :0:.env",
		"git show HEAD~1:sub/id_rsa", "git cat-file -p HEAD:id_rsa", "grep -f .env x", "grep --file=.env x",
		"grep -nf.env x", "du -X.netrc .", "rg --ignore-file .npmrc x", "cat config.yaml", "cp x pyproject.toml",
		"rm uv.lock", "touch sub/UV.LOCK", "echo .env", `echo "see .env now"`, "env -iCid_rsa ls", "head -n 1 -- .env"}
	for _, cmd := range hits {
		v := Review(cmd)
		if v.Action != Prompt || v.RuleKey != "sensitive-path" || !v.Exact {
			t.Errorf("Review(%q) = %s %s exact=%v, want exact sensitive-path", cmd, v.Action, v.RuleKey, v.Exact)
		}
	}
	for _, cmd := range []string{"cat pyproject.toml", "cat uv.lock", "cat .gitignore", "cat id_rsa.pub",
		"cat x.env", "cat environment.txt", "git show HEAD:README.md", "ls .github", "cat keys.txt"} {
		if v := Review(cmd); v.Action != Allow {
			t.Errorf("Review(%q) = %s %s %q, want allow", cmd, v.Action, v.RuleKey, v.Reason)
		}
	}
}

func TestOutsidePathsInCommands(t *testing.T) {
	for _, cmd := range []string{"cat /etc/passwd", "cat x /etc/passwd", "ls ~", "ls ~root", "cat ~/x",
		"cat ../x", "cat a/../../x", "cat ./..", "rm -rf ../victim", "mkdir /tmp/x", "cp x --target-directory=/tmp",
		"env -C/etc cat passwd", "env -C /etc cat passwd", "env --chdir=/etc ls", "rg -f/etc/passwd x",
		"grep -nf/etc/passwd x", "git -C /etc status", "git --git-dir=/x status", "/bin/cat x", "sort -T/tmp x",
		"date -r /etc/passwd", "file -m/etc/magic x", "git diff -O/etc/passwd", "git ls-files -X../secret"} {
		v := Review(cmd)
		if v.Action != Prompt || v.RuleKey != "path-outside-workspace" || !v.Exact {
			t.Errorf("Review(%q) = %s %s %q exact=%v, want exact path-outside-workspace", cmd, v.Action, v.RuleKey, v.Reason, v.Exact)
		}
	}
	for _, cmd := range []string{"cat a..b", "cat x/..y", "git log HEAD~1..HEAD", "cut -d/ -f1 x",
		"sort -t. -k2 x", "ls x~", "git show HEAD~2"} {
		if v := Review(cmd); v.Action != Allow {
			t.Errorf("Review(%q) = %s %s %q, want allow", cmd, v.Action, v.RuleKey, v.Reason)
		}
	}
}
