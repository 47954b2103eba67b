package cmdguard

import (
	"slices"
	"strings"
	"testing"
)

// promptRules pins every prompt rule from both sides: commands that must
// get the key, and near misses that must not.
var promptRules = []struct {
	key   string
	hits  []string
	near  []string // must not get key (any other verdict is fine)
	exact bool     // the key is always Exact
}{
	{key: "cwd-change", hits: []string{"cd build", "pushd x", "popd", "env -C build ls", "env --chdir=build ls",
		"env --ch build ls", "env -iC build ls"}, near: []string{"echo cd", "ls cd"}},
	{key: "file-delete", hits: []string{"rm build.log", "rm -rf build", "rmdir out", "unlink a.txt", "command rm x",
		"env rm x", "rm -- -x"}, near: []string{"echo rm", "grep rm x", "rmx"}},
	{key: "file-write", hits: []string{"cp a b", "mv a b", "mkdir out", "touch x", "chmod +x x", "chown me x",
		"chgrp g x", "ln -s a b", "install a b", "tee out", "sort -o out in", "sort --output=out in",
		"sort --o out in", "sort --outp=out in", "sort -ro out in", "sort -Ttmp in", "sort --temporary-directory=tmp in",
		"sort --te tmp in", "tree -o out", "tree --output out", "tree --ou=out", "tree -aR", "uniq in out",
		"file -C", "file --compile", "file --comp", "find . -fprint x", "find . -fls x", "find . -fprint0 x",
		"find . -fprintf x %p", "sed -n 'w out' x", "sed -n 's/a/b/w out' x", "git log --output=x",
		"git log --outp x", "git diff --ou=x"}, near: []string{"sort -rko2 in", "sort -- -o in", "uniq in",
		"uniq in -", "tree -a", "file x", "sed -n p x", "git log --oneline", "git diff --output-indicator-new=x",
		"sort --key=1 in"}},
	{key: "file-read", hits: []string{"sed -n 'r x' y", "sed -n '1R x' y", "sed -n -e p -e 'R x' y"},
		near: []string{"sed -n p y"}},
	{key: "find-delete", hits: []string{"find . -delete", "find . -name x -delete", "find . -exec rm '{}' +",
		"find . -execdir rm '{}' ';'"}, near: []string{"find . -name delete", "find . -exec cat '{}' +"}},
	{key: "in-place-edit", hits: []string{"sed -i s/a/b/ x", "sed -ni s/a/b/p x", "sed -n --in-place s/a/b/p x",
		"sed -n --in-place=.bak p x", "sed -n --i p x", "sed -n --in p x", "sed -n --in-p p x", "sed -n --in-pl=.b p x",
		"perl -i -p x", "ruby -i x"}, near: []string{"sed -n p x", "sed -n --inplace p x"}},
	{key: "project-code-execution", hits: []string{"go test ./...", "go vet ./...", "pytest", "ruff check",
		"mypy .", "pyright", "python -m pytest", "python3 -m compileall .", "uv run pytest", "uv run ls",
		"uv --version", "uv version", "npm test", "npm run build", "pnpm run lint:x", "yarn test", "cargo test",
		"cargo check", "cargo build", "cargo clippy", "cargo fmt --check", "make test", "make build lint",
		"./run.sh", "bin/x", "'sub\\x'", "rg --pre cat x", "rg --pre=cat x", "rg --pr cat x",
		"rg --hostname-bin=x y", "rg --host x y", "sort --compress-program=gzip x", "sort --c gzip x",
		"git diff --ext-diff", "git diff --ext", "git log --textconv", "git log --tex", "git show --show-signature",
		"git log --show-s", "git log --format=%GK", "git log --pretty=format:%GS", "git grep --open-files-in-pager=vim x", "git grep --open x", "git grep -Ovim x",
		"git grep -O x", "find . -exec cat '{}' +", "find . -ok cat '{}' ';'", "sed -n e x", "sed -n 's/a/b/e' x",
		"sed -n -f script.sed x", "sed -n --file=script.sed x", "sed -n --fi script.sed x", "sed -n k x"},
		near: []string{"rg --pre-glob x y", "rg --pretty x", "git diff --text", "git diff --no-ext-diff",
			"git log --no-textconv", "git log --format=%H%g", "make", "make install", "uv run frobnicate", "npm run deploy", "go build",
			"cargo fmt", "python x.py"}},
	{key: "system-time", hits: []string{"date -s now", "date -us now", "date --set=now", "date --set now",
		"date --se now", "date --s now"}, near: []string{"date -u", "date --date=now", "date -d now"}},
	{key: "network-download", hits: []string{"curl https://example.com", "wget x"}, near: []string{"echo curl"}},
	{key: "network-command", hits: []string{"git clone x", "git fetch", "git pull", "git push", "git ls-remote x",
		"git remote update", "git remote prune origin", "git remote show origin"}, near: []string{"git remote -v", "git status"}},
	{key: "repository-mutation", hits: []string{"git remote add a b", "git branch x", "git tag v1", "git worktree add x",
		"git branch --li", "git remote --verb"}, near: []string{"git branch", "git branch --list", "git tag -l",
		"git worktree list", "git remote get-url origin", "git branch --show-current"}},
	{key: "git-destructive", hits: []string{"git reset --hard", "git reset --ha HEAD", "git clean -f", "git clean -xdf",
		"git clean --force", "git branch -D x", "git branch -d -f x", "git branch -df x", "git branch --delete --force x",
		"git branch --del --fo x"}, near: []string{"git reset --soft HEAD", "git clean -n", "git branch -d x"}},
	{key: "git-force-push", hits: []string{"git push --force", "git push -f", "git push -uf origin x",
		"git push --fo", "git push --force-with-lease", "git push --force-if-includes", "git push origin +main",
		"git push origin :main", "git push --delete origin x", "git push -d origin x", "git push --mirror",
		"git push --prune"}, near: []string{"git push origin main", "git push -u origin x"}},
	{key: "shell-eval", exact: true, hits: []string{"bash -c 'echo hi'", "sh -ec 'ls'", "eval ls", "eval",
		"env -S 'ls'", "env --split-string=ls", "env --sp ls", "sh -c"}, near: []string{"bash script.sh", "sh"}},
	{key: "script-eval", exact: true, hits: []string{"python -c 1", "python3 -Ic 1", "node -e 1", "perl -e 1",
		"ruby -e 1", "node -c x"}, near: []string{"python x.py", "node x.js"}},
	{key: "dependency-change", hits: []string{"pip install x", "pip3 install x", "python -m pip install x",
		"uv add x", "uv remove x", "uv sync", "uv lock", "uv pip install x", "uv tool install x", "npm install",
		"npm i", "npm ci", "yarn add x", "pnpm update", "npm upgrade", "npm remove x", "npm audit fix",
		"cargo install x", "go install x@latest"}, near: []string{"pip list", "uv pip list", "npm audit", "go list"}},
	{key: "dependency-exec", hits: []string{"npx x", "pnpm dlx x", "yarn dlx x"}, near: []string{"pnpm x"}},
	{key: "sudo", hits: []string{"sudo ls", "sudo -u root ls"}, near: []string{"echo sudo"}},
	{key: "service-control", hits: []string{"systemctl restart x", "service x start", "launchctl list"}},
	{key: "process-kill", hits: []string{"kill 1", "pkill x", "killall x"}},
	{key: "container-lifecycle", hits: []string{"docker ps", "docker run x"}},
	{key: "environment-overlay", exact: true, hits: []string{"A=1 ls", "env A=1 ls", "'a[1]'=2 ls", "A+=1 ls"},
		near: []string{"ls A=1", "echo a=b"}},
	{key: "complex-shell", exact: true, hits: []string{"printf -v x 1", "printf -vx 1", "printf -v 'a[0]' 1",
		"ls || pwd", "sleep 1 &", "ls\npwd", "cat <<EOF\nx\nEOF", "echo 'open", "ls ;; pwd", "ls\x00"},
		near: []string{"printf -- -v", "printf '%s' -v"}},
	{key: "unknown-command", exact: true, hits: []string{"frobnicate", "read x", "let x=1", "test -v x",
		"declare x", "FOO", "env", "command", "x=1"}, near: []string{"ls"}},
	{key: "pipeline", exact: true, hits: []string{"ls | python x.py", "cat x | sh"}, near: []string{"ls | wc -l"}},
}

func TestPromptRulesBothSides(t *testing.T) {
	for _, r := range promptRules {
		for _, cmd := range r.hits {
			v := Review(cmd)
			if v.Action != Prompt || v.RuleKey != r.key || v.Risk != RiskHigh {
				t.Errorf("Review(%q) = %s %s %q, want prompt %s", cmd, v.Action, v.RuleKey, v.Reason, r.key)
				continue
			}
			if v.Exact != (r.exact || fingerprintedKeys[r.key]) {
				t.Errorf("Review(%q).Exact = %v", cmd, v.Exact)
			}
			if strings.ContainsAny(cmd, "\n|&;\x00'") || r.key == "complex-shell" || r.key == "unknown-command" {
				continue
			}
			// As the first and as the last segment of a chain the key is
			// the same, and the verdict is bound to the exact command.
			for _, chain := range []string{cmd + " && pwd", "pwd && " + cmd, "pwd; " + cmd} {
				c := Review(chain)
				if c.Action != Prompt || c.RuleKey != r.key || !c.Exact {
					t.Errorf("Review(%q) = %s %s exact=%v, want prompt %s exact", chain, c.Action, c.RuleKey, c.Exact, r.key)
				}
			}
		}
		for _, cmd := range r.near {
			if v := Review(cmd); v.RuleKey == r.key {
				t.Errorf("near miss Review(%q) = %s %s %q", cmd, v.Action, v.RuleKey, v.Reason)
			}
		}
	}
}

// dangerousLongOptions lists, per command, each long option the guard
// treats as dangerous. Every abbreviation from minUnique characters on
// (after "--") must get key, in the forms --opt, --opt=value and --opt
// value; shorter ones may be ambiguous with another dangerous option but
// must never be allowed.
var dangerousLongOptions = []struct {
	before, option, after string
	value                 string // "" when the option takes no value
	minUnique             int
	key                   string
	skip                  []string // exact options of the same prefix (git diff --text)
}{
	{before: "sed -n", option: "--in-place", after: "p x", minUnique: 1, key: "in-place-edit"},
	{before: "sed -n", option: "--file", value: "s.sed", after: "x", minUnique: 1, key: "project-code-execution"},
	{before: "sort", option: "--output", value: "out", after: "in", minUnique: 1, key: "file-write"},
	{before: "sort", option: "--temporary-directory", value: "tmp", after: "in", minUnique: 1, key: "file-write"},
	{before: "sort", option: "--compress-program", value: "gzip", after: "in", minUnique: 1, key: "project-code-execution"},
	{before: "sort", option: "--random-source", value: "/dev/urandom", after: "in", minUnique: 1, key: "path-outside-workspace"},
	{before: "sort", option: "--files0-from", value: ".env", after: "", minUnique: 1, key: "sensitive-path"},
	{before: "tree", option: "--output", value: "out", minUnique: 1, key: "file-write"},
	{before: "file", option: "--compile", minUnique: 1, key: "file-write"},
	{before: "date", option: "--set", value: "now", minUnique: 1, key: "system-time"},
	{before: "date", option: "--reference", value: "id_rsa", minUnique: 1, key: "sensitive-path"},
	{before: "date", option: "--file", value: "../x", minUnique: 1, key: "path-outside-workspace"},
	{before: "rg", option: "--pre", value: "cat", after: "x", minUnique: 1, key: "project-code-execution"},
	{before: "rg", option: "--hostname-bin", value: "x", after: "y", minUnique: 1, key: "project-code-execution"},
	{before: "rg", option: "--ignore-file", value: ".netrc", after: "y", minUnique: 1, key: "sensitive-path"},
	{before: "grep", option: "--exclude-from", value: ".netrc", after: "x y", minUnique: 1, key: "sensitive-path"},
	{before: "grep", option: "--file", value: "/etc/passwd", after: "y", minUnique: 1, key: "path-outside-workspace"},
	{before: "du", option: "--exclude-from", value: ".pgpass", minUnique: 1, key: "sensitive-path"},
	{before: "wc", option: "--files0-from", value: "/etc/x", minUnique: 1, key: "path-outside-workspace"},
	{before: "file", option: "--magic-file", value: "server.key", after: "x", minUnique: 1, key: "sensitive-path"},
	{before: "git diff", option: "--ext-diff", minUnique: 1, key: "project-code-execution"},
	{before: "git log -p", option: "--textconv", minUnique: 1, key: "project-code-execution", skip: []string{"--text"}},
	{before: "git log", option: "--show-signature", minUnique: 1, key: "project-code-execution"},
	{before: "git grep", option: "--open-files-in-pager", after: "x", minUnique: 2, key: "project-code-execution"},
	{before: "git log", option: "--output", value: "x", minUnique: 2, key: "file-write"},
	{before: "git reset", option: "--hard", minUnique: 1, key: "git-destructive"},
	{before: "git push", option: "--force", minUnique: 1, key: "git-force-push"},
	{before: "git push", option: "--force-with-lease", minUnique: 1, key: "git-force-push"},
	{before: "git push", option: "--mirror", minUnique: 1, key: "git-force-push"},
	{before: "git ls-files", option: "--exclude-from", value: ".netrc", minUnique: 1, key: "sensitive-path"},
	{before: "git ls-files", option: "--pathspec-from-file", value: "../x", minUnique: 1, key: "path-outside-workspace"},
	{before: "git grep", option: "--file", value: ".env", after: "x", minUnique: 1, key: "sensitive-path"},
	{before: "env", option: "--chdir", value: "build", after: "ls", minUnique: 1, key: "cwd-change"},
	{before: "env", option: "--split-string", value: "ls", minUnique: 2, key: "shell-eval"},
}

func TestLongOptionAbbreviations(t *testing.T) {
	for _, o := range dangerousLongOptions {
		name := strings.TrimPrefix(o.option, "--")
		for n := 1; n <= len(name); n++ {
			abbr := "--" + name[:n]
			if slices.Contains(o.skip, abbr) {
				continue
			}
			var forms []string
			if o.value == "" {
				forms = []string{abbr}
			} else {
				forms = []string{abbr + "=" + o.value, abbr + " " + o.value}
			}
			for _, f := range forms {
				cmd := strings.TrimSpace(o.before + " " + f + " " + o.after)
				v := Review(cmd)
				if v.Action == Allow || (n >= o.minUnique && v.RuleKey != o.key) {
					t.Errorf("Review(%q) = %s %s %q, want %s", cmd, v.Action, v.RuleKey, v.Reason, o.key)
				}
			}
		}
		// Past the option's name it is another option, or none.
		cmd := strings.TrimSpace(o.before + " " + o.option + "x" + " " + o.after)
		if v := Review(cmd); v.RuleKey == o.key && o.value == "" {
			t.Errorf("near miss Review(%q) = %s %s", cmd, v.Action, v.RuleKey)
		}
	}
}
