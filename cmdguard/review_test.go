package cmdguard

import (
	"strings"
	"testing"
)

type reviewCase struct {
	cmd    string
	action Action
	risk   string
	reason string // prefix
	key    string
}

func allow(cmd string) reviewCase {
	return reviewCase{cmd: cmd, action: Allow, risk: RiskLow, reason: "safe terminal command", key: "safe-command"}
}

func ask(cmd, key, reason string) reviewCase {
	return reviewCase{cmd: cmd, action: Prompt, risk: RiskHigh, reason: reason, key: key}
}

func block(cmd, key, reason string) reviewCase {
	return reviewCase{cmd: cmd, action: Block, risk: RiskCritical, reason: reason, key: key}
}

const (
	rsCmdSub   = "command substitution is not auto-approved"
	rsProcSub  = "process substitution is not auto-approved"
	rsExpand   = "shell expansion is not auto-approved"
	rsGlob     = "unquoted filename expansion is not auto-approved"
	rsRedirect = "shell redirection can write or read arbitrary paths"
	rsAbs      = "absolute or home-relative paths are not auto-approved"
	rsParent   = "parent-directory paths are not auto-approved"
	rsProject  = "executes workspace or project code"
	rsRelExec  = "relative or explicit executable paths can run workspace code"
	rsUnknown  = "unrecognized terminal command: "
	rsRm       = "recursive delete of root, home, or system directory"
	rsShutdown = "system shutdown or reboot"
	rsRaw      = "write to raw block device"
	rsKillAll  = "kill all processes"
	rsPerm     = "recursive permission or ownership change"
	rsEval     = "shell command evaluation"
)

// reviewCases are taken from the spec (every rule and pattern) and from the
// original's security tests, plus the destructive spellings the Host must
// block on top of them.
var reviewCases = []reviewCase{
	// Allowed: literal read-only commands.
	allow("printf hello"),
	allow("ls -la"),
	allow("pwd"),
	allow("cat README.md"),
	allow("head -n 20 main.go"),
	allow("tail -5 go.mod"),
	allow("wc -l main.go"),
	allow("echo hello world"),
	allow("grep -rn needle ."),
	allow("rg needle . | head -20"),
	allow("rg rm ."),
	allow("find . -name main.go"),
	allow("sed -n 1,5p README.md"),
	allow("date -Iseconds"),
	allow("git status --short"),
	allow("git diff --check"),
	allow("git log -1 --oneline"),
	allow("git rev-parse HEAD"),
	allow("git ls-files"),
	allow("git grep needle"),
	allow("git describe --always"),
	allow("git remote"),
	allow("git remote -v"),
	allow("git branch"),
	allow("git branch --show-current"),
	allow("git branch --list 'feat/*'"),
	allow("git tag --list 'v*'"),
	allow("git worktree list"),
	allow("git show HEAD"),
	allow("ls && pwd"),
	allow("cat a.txt; wc -l a.txt"),
	allow("echo '$(printf literal)'"),
	allow(`echo "\$(printf literal)"`),
	allow("printf '%s\\n' '`whoami`'"),
	allow("echo '<(printf literal)'"),
	allow(`echo "<(printf literal)"`),
	allow("printf '$HOME'"),
	allow(`echo "cost $ USD"`),
	allow("command -v ls"),
	allow("echo 'rm -rf /tmp/x'"),
	allow("echo 'C:\\'"),

	// Project code: always asks.
	ask("go test ./...", "project-code-execution", rsProject),
	ask("go vet ./cmdguard/", "project-code-execution", rsProject),
	ask("pytest tests/tools/test_builtin_tools.py", "project-code-execution", rsProject),
	ask("python -m pytest tests", "project-code-execution", rsProject),
	ask("uv run pytest tests", "project-code-execution", rsProject),
	ask("npm test", "project-code-execution", rsProject),
	ask("npm run build", "project-code-execution", rsProject),
	ask("yarn run lint:fix", "project-code-execution", rsProject),
	ask("cargo test", "project-code-execution", rsProject),
	ask("cargo fmt --check", "project-code-execution", rsProject),
	ask("make test", "project-code-execution", rsProject),
	ask("ls && make build", "project-code-execution", rsProject),
	ask("./cat README.md", "project-code-execution", rsRelExec),
	ask("bin/rg needle .", "project-code-execution", rsRelExec),
	ask("./run.sh", "project-code-execution", rsRelExec),
	ask("rg --pre 'python malicious.py' needle .", "project-code-execution", "ripgrep executes"),
	ask("sort --compress-program='python malicious.py' input.txt", "project-code-execution", "sort executes"),
	ask("sort --compress=gzip input.txt", "project-code-execution", "sort executes"),
	ask("git diff --ext-diff", "project-code-execution", "git executes"),
	ask("git diff --textconv HEAD^ HEAD", "project-code-execution", "git executes"),
	ask("git log --show-signature -1", "project-code-execution", "git executes"),
	ask("git grep --open-files-in-pager='python x.py' needle", "project-code-execution", "git executes"),
	ask("git grep -Ovim needle", "project-code-execution", "git executes"),
	ask(`find . -exec python malicious.py \;`, "project-code-execution", "find executes"),
	ask("sed -n 'e python malicious.py' README.md", "project-code-execution", "sed executes"),
	ask("sed -n '1~2e python malicious.py' README.md", "project-code-execution", "sed executes"),
	ask("sed -n '1,+2e python malicious.py' README.md", "project-code-execution", "sed executes"),
	ask("sed -n 's/a/b/e' README.md", "project-code-execution", "sed executes"),
	ask("sed -n -fscript.sed README.md", "project-code-execution", "sed executes commands loaded"),

	// Interpreters and shells.
	ask("python script.py", "unknown-command", rsUnknown+"python"),
	ask("node server.js", "unknown-command", rsUnknown+"node"),
	ask("bash -c 'echo hello'", "shell-eval", rsEval),
	ask("sh -c 'echo $(printf nested)'", "shell-eval", rsEval),
	ask("env MODE=test sh -c 'echo `whoami`'", "shell-eval", rsEval),
	ask("command bash -lc 'echo ${HOME}'", "shell-eval", rsEval),
	ask("eval echo hi", "shell-eval", rsEval),
	ask("env -S 'echo hi'", "shell-eval", "env split-string"),
	ask("python3 -c 'print(1)'", "script-eval", "python command evaluation"),
	ask("node -e 'process.exit(1)'", "script-eval", "script command evaluation"),
	ask("perl -e 'print 1'", "script-eval", "script command evaluation"),

	// File mutations and other effects.
	ask("rm -rf build", "file-delete", "delete files"),
	ask("rm -rf /tmp/x", "path-outside-workspace", rsAbs),
	ask("unlink a.txt", "file-delete", "delete files"),
	ask("cp a b", "file-write", "write or mutate files"),
	ask("mkdir out", "file-write", "write or mutate files"),
	ask("chmod -R 777 build", "file-write", "write or mutate files"),
	ask("echo hi | tee out.txt", "file-write", "write files through tee"),
	ask("sort -o sorted.txt input.txt", "file-write", "sort writes output"),
	ask("sort --output=sorted.txt input.txt", "file-write", "sort writes output"),
	allow("sort -rko2 input.txt"), // -k takes "o2": no output file
	ask("sort -T/tmp input.txt", "path-outside-workspace", rsAbs),
	ask("sort -Ttmp input.txt", "file-write", "sort writes temporary"),
	ask("tree -o tree.txt .", "file-write", "tree writes output"),
	ask("uniq input.txt output.txt", "file-write", "uniq writes output"),
	ask("file --compile", "file-write", "file compiles"),
	ask("file -C", "file-write", "file compiles"),
	ask("find . -fprint matches.txt", "file-write", "find writes output"),
	ask("find . -delete", "find-delete", "find deleting files"),
	ask("find . -exec rm x ';'", "find-delete", "find deleting files"),
	ask("sed -n 'w output.txt' README.md", "file-write", "sed writes output"),
	ask("sed -n 's/a/b/w output.txt' README.md", "file-write", "sed writes output"),
	ask("sed -n 'r /etc/passwd' README.md", "file-read", "sed reads a file"),
	ask("sed -n 'R .netrc' README.md", "file-read", "sed reads a file"),
	ask("sed -i 's/a/b/' x.txt", "in-place-edit", "in-place file edit"),
	ask("sed -n --in-place=.bak 's/a/b/p' x.txt", "in-place-edit", "in-place file edit"),
	ask("git diff --output=/tmp/demiurge.diff", "path-outside-workspace", rsAbs),
	ask("git diff --output=demiurge.diff", "file-write", "git command writes output"),
	ask("git log --output=history.txt -1", "file-write", "git command writes output"),
	ask("date --set='2026-07-13 12:00:00'", "system-time", "date changes the system clock"),
	ask("date -s '2026-07-13 12:00:00'", "system-time", "date changes the system clock"),
	ask("date -us 'now'", "system-time", "date changes the system clock"),

	// Working directory, environment, network, dependencies, services.
	ask("cd linked && cat passwd", "cwd-change", "shell working-directory"),
	ask("env -C/etc cat passwd", "path-outside-workspace", rsAbs),
	ask("env -Cetc cat passwd", "cwd-change", "env working-directory"),
	ask("env --chdir=linked cat passwd", "cwd-change", "env working-directory"),
	ask("TRACE=1 printf hello", "environment-overlay", "inline environment assignments"),
	ask("env TRACE=1 printf hello", "environment-overlay", "inline environment assignments"),
	ask("LD_PRELOAD=./malicious.so printf hello", "environment-overlay", "inline environment assignments"),
	ask("curl https://example.com", "network-download", "download from the network"),
	ask("wget https://example.com/x", "network-download", "download from the network"),
	ask("git clone https://example.com/r.git", "network-command", "git command accesses"),
	ask("git push origin main", "network-command", "git command accesses"),
	ask("git remote update", "network-command", "git remote command"),
	ask("git remote add attacker https://example.invalid/repo.git", "repository-mutation", "git command mutates"),
	ask("git branch new-topic", "repository-mutation", "git command mutates"),
	ask("git tag v-test", "repository-mutation", "git command mutates"),
	ask("git worktree lock .", "repository-mutation", "git command mutates"),
	ask("git reset --hard HEAD~1", "git-destructive", "git reset --hard"),
	ask("git clean -fdx", "git-destructive", "git clean"),
	ask("git branch -D old", "git-destructive", "git branch -D"),
	ask("git push --force origin main", "git-force-push", "git force push"),
	ask("git push origin +main", "git-force-push", "git force push"),
	ask("npm install", "dependency-change", "change or install dependencies"),
	ask("pip install requests", "dependency-change", "install Python packages"),
	ask("python -m pip install requests", "dependency-change", "install Python packages"),
	ask("uv add httpx", "dependency-change", "change or install dependencies"),
	ask("cargo install ripgrep", "dependency-change", "install Rust packages"),
	ask("go install example.com/tool@latest", "dependency-change", "install Go packages"),
	ask("npx cowsay hi", "dependency-exec", "download and execute"),
	ask("pnpm dlx cowsay", "dependency-exec", "download and execute"),
	ask("sudo ls", "sudo", "sudo command"),
	ask("systemctl restart nginx", "service-control", "system service control"),
	ask("kill 1234", "process-kill", "kill processes"),
	ask("pkill node", "process-kill", "kill processes"),
	ask("docker ps", "container-lifecycle", "container lifecycle"),

	// Sensitive and outside paths.
	ask("cat .env", "sensitive-path", "touches sensitive path"),
	ask("cat .npmrc", "sensitive-path", "touches sensitive path"),
	ask("cat .aws/credentials", "sensitive-path", "touches sensitive path"),
	ask("cat .kube/config", "sensitive-path", "touches sensitive path"),
	ask("grep --exclude-from=.netrc needle README.md", "sensitive-path", "option reads a sensitive path"),
	ask("du -X.netrc .", "sensitive-path", "option reads a sensitive path"),
	ask("git ls-files -X.netrc", "sensitive-path", "option reads a sensitive path"),
	ask("cat /etc/passwd", "path-outside-workspace", rsAbs),
	ask("ls ~", "path-outside-workspace", rsAbs),
	ask("cat ../secret.txt", "path-outside-workspace", rsParent),
	ask("rg -f/etc/passwd README.md", "path-outside-workspace", rsAbs),
	ask("grep -nf/etc/passwd needle README.md", "path-outside-workspace", rsAbs),
	ask("file -m/etc/passwd README.md", "path-outside-workspace", rsAbs),
	ask("git diff -O/etc/passwd", "path-outside-workspace", rsAbs),
	ask("git ls-files -X../secret", "path-outside-workspace", rsParent),
	ask("sort --random-source=/tmp/random-seed input.txt", "path-outside-workspace", rsAbs),

	// Shell syntax the guard does not model.
	ask(`echo "$(printf nested-$(whoami))"`, "command-substitution", rsCmdSub),
	ask(`printf "%s\n" "`+"`whoami`"+`"`, "command-substitution", rsCmdSub),
	ask(`env TRACE=1 command echo "$(printf wrapped)"`, "command-substitution", rsCmdSub),
	ask("echo \"$\\\n(printf continued)\"", "command-substitution", rsCmdSub),
	ask(`echo "＄（printf unicode）"`, "command-substitution", rsCmdSub),
	ask(`echo "prefix\"$(whoami)"`, "command-substitution", rsCmdSub),
	ask(`echo "$(printf missing"`, "command-substitution", rsCmdSub),
	ask("echo safe#$(printf active)", "command-substitution", rsCmdSub),
	ask("echo "+strings.Repeat("$(", 64)+"printf nested"+strings.Repeat(")", 64), "complex-shell", "command is too large or too deeply nested"),
	ask("echo <(printf process)", "process-substitution", rsProcSub),
	ask("echo >(cat)", "process-substitution", rsProcSub),
	ask(`echo "$HOME"`, "shell-expansion", rsExpand),
	ask(`echo "${HOME}"`, "shell-expansion", rsExpand),
	ask(`echo "$((1 + 1))"`, "shell-expansion", rsExpand),
	ask(`printf "%s\n" "$[1 + 1]"`, "shell-expansion", rsExpand),
	ask(`echo "${HOME"`, "shell-expansion", rsExpand),
	ask("cat .s[s]h/id_ed25519", "filename-expansion", rsGlob),
	ask("cat .e{n,x}v", "filename-expansion", rsGlob),
	ask("rm -f *.tmp", "filename-expansion", rsGlob),
	ask("/???/?m -rf /", "filename-expansion", rsGlob),
	ask("printf hello > out.txt", "shell-redirection", rsRedirect),
	ask("cat < in.txt", "shell-redirection", rsRedirect),
	ask("python <<'PY'\nprint('hello')\nPY", "complex-shell", "heredoc"),
	ask("ls || pwd", "complex-shell", "conditional OR"),
	ask("sleep 10 &", "complex-shell", "background shell operator"),
	ask("ls\npwd", "complex-shell", "multi-line"),
	ask("printf SAFE ＼\nprintf SECOND_COMMAND", "complex-shell", "multi-line"),
	ask("printf SAFE \\\r\nprintf SECOND_COMMAND", "complex-shell", "multi-line"),
	ask(`echo "unterminated`, "complex-shell", "unterminated shell quote"),
	ask("ls ;; pwd", "complex-shell", "empty shell segment"),
	ask("ls\x00", "complex-shell", "null bytes"),
	allow("ls | cat | sort"),
	ask("wc -l *.go", "filename-expansion", rsGlob),
	ask("ls | python x.py", "pipeline", "pipeline is only auto-approved"),
	ask("frobnicate --all", "unknown-command", rsUnknown+"frobnicate"),
	ask("make install", "unknown-command", rsUnknown+"make"),
	ask("go build ./...", "unknown-command", rsUnknown+"go"),
	ask("git -c core.fsmonitor=x status", "unknown-command", rsUnknown+"git"),
	ask("   ", "empty-command", "empty command"),
	ask("\x1b[31mls\x1b[0m", "filename-expansion", rsGlob),
	ask("\x1b(Bls", "unknown-command", rsUnknown+"\x1b(Bls"),

	// Destructive: blocked before any approval.
	block("rm -rf /", "rm-critical-path", rsRm),
	block("rm -r -f /", "rm-critical-path", rsRm),
	block("rm -Rf /", "rm-critical-path", rsRm),
	block("rm --recursive --force /", "rm-critical-path", rsRm),
	block("rm -rf --no-preserve-root /", "rm-critical-path", rsRm),
	block("rm -rf /*", "rm-critical-path", rsRm),
	block("rm -rf //", "rm-critical-path", rsRm),
	block("rm -rf /./", "rm-critical-path", rsRm),
	block("rm -rf /usr/..", "rm-critical-path", rsRm),
	block("rm -rf -- /", "rm-critical-path", rsRm),
	block("rm -rf ~", "rm-critical-path", rsRm),
	block("rm -rf ~/", "rm-critical-path", rsRm),
	block("rm -rf ~/..", "rm-critical-path", rsRm),
	block("rm -rf $HOME", "rm-critical-path", rsRm),
	block(`rm -rf "$HOME"`, "rm-critical-path", rsRm),
	block("rm -rf ${HOME}/", "rm-critical-path", rsRm),
	block("rm -rf /etc", "rm-critical-path", rsRm),
	block("rm -rf /usr/*", "rm-critical-path", rsRm),
	block(`rm -rf "/"`, "rm-critical-path", rsRm),
	block(`"r"m -rf '/'`, "rm-critical-path", rsRm),
	block(`\rm -rf /`, "rm-critical-path", rsRm),
	block(`$'\x72\x6d' -rf /`, "rm-critical-path", rsRm),
	block("/bin/rm -rf /", "rm-critical-path", rsRm),
	block("sudo rm -rf /", "rm-critical-path", rsRm),
	block("sudo -- rm -rf /", "rm-critical-path", rsRm),
	block("sudo -u root rm -rf /", "rm-critical-path", rsRm),
	block("env rm -rf /", "rm-critical-path", rsRm),
	block("/usr/bin/env -i FOO=1 rm -rf /", "rm-critical-path", rsRm),
	block("xargs rm -rf /", "rm-critical-path", rsRm),
	block("nice -n 10 rm -rf /", "rm-critical-path", rsRm),
	block("timeout -s KILL 10 rm -rf /", "rm-critical-path", rsRm),
	block("busybox rm -rf /", "rm-critical-path", rsRm),
	block("command rm -rf /", "rm-critical-path", rsRm),
	block("exec rm -rf /", "rm-critical-path", rsRm),
	block("nohup sh -c 'rm -rf /'", "rm-critical-path", rsRm),
	block("bash -lc 'rm -rf /'", "rm-critical-path", rsRm),
	block(`bash -c "rm -rf /"`, "rm-critical-path", rsRm),
	block(`sh -c "sh -c 'rm -rf /'"`, "rm-critical-path", rsRm),
	block("eval 'rm -rf /'", "rm-critical-path", rsRm),
	block("env MODE=test eval 'echo $(rm -rf /)'", "rm-critical-path", rsRm),
	block("env -S 'rm -rf /'", "rm-critical-path", rsRm),
	block("su -c 'rm -rf /' root", "rm-critical-path", rsRm),
	block(`echo "$(rm -rf /)"`, "rm-critical-path", rsRm),
	block("echo `rm -rf /`", "rm-critical-path", rsRm),
	block("cat <(rm -rf /)", "rm-critical-path", rsRm),
	block("ls | rm -rf /", "rm-critical-path", rsRm),
	block("ls; rm -rf /", "rm-critical-path", rsRm),
	block("ls && rm -rf /", "rm-critical-path", rsRm),
	block("false || rm -rf /", "rm-critical-path", rsRm),
	block("sleep 1 & rm -rf /", "rm-critical-path", rsRm),
	block("ls\nrm -rf /", "rm-critical-path", rsRm),
	block("(rm -rf /)", "rm-critical-path", rsRm),
	block("{ rm -rf /; }", "rm-critical-path", rsRm),
	block("if true; then rm -rf /; fi", "rm-critical-path", rsRm),
	block("rm${IFS}-rf${IFS}/", "rm-critical-path", rsRm),
	block("a=/; rm -rf $a", "rm-critical-path", rsRm),
	block("x='rm -rf /'; $x", "rm-critical-path", rsRm),
	block("{rm,-rf,/}", "rm-critical-path", rsRm),
	block("echo 'rm -rf /' | sh", "rm-critical-path", rsRm),
	block("find / -delete", "rm-critical-path", rsRm),
	block(`find . -exec rm -rf / \;`, "rm-critical-path", rsRm),
	block("rm -rf / \"unterminated", "rm-critical-path", rsRm),
	block("rm -rf /\x00", "rm-critical-path", rsRm),
	block("rм -rf /", "rm-critical-path", rsRm),
	block("rm —rf /", "rm-critical-path", rsRm),
	block("r\u200bm -rf /", "rm-critical-path", rsRm),
	block("\x1b[2Krm -rf /", "rm-critical-path", rsRm),
	block(`echo ＇$(shutdown now)＇`, "shutdown", rsShutdown),
	block(`echo ＼$(shutdown now)`, "shutdown", rsShutdown),
	block(`echo "$(shutdown now)"`, "shutdown", rsShutdown),
	block("echo <(shutdown now)", "shutdown", rsShutdown),
	block("exec bash -c 'shutdown now'", "shutdown", rsShutdown),
	block("env MODE=test sh -c 'shutdown now'", "shutdown", rsShutdown),
	block("eval 'shutdown now'", "shutdown", rsShutdown),
	block("reboot", "shutdown", rsShutdown),
	block("sudo poweroff", "shutdown", rsShutdown),
	block("halt -p", "shutdown", rsShutdown),
	block("init 0", "shutdown", "init shutdown"),
	block("telinit 6", "shutdown", "telinit shutdown"),
	block("systemctl reboot", "shutdown", "systemctl shutdown"),
	block("sudo -S whoami", "sudo-stdin", "sudo password guessing"),
	block("printf pw | sudo -S whoami", "sudo-stdin", "sudo password guessing"),
	block("echo pw | sudo --stdin id", "sudo-stdin", "sudo password guessing"),
	block("sudo -kS id", "sudo-stdin", "sudo password guessing"),
	block("mkfs.ext4 /dev/sda1", "mkfs", "format filesystem"),
	block("sudo mkfs -t ext4 /dev/sdb", "mkfs", "format filesystem"),
	block("dd if=/dev/zero of=/dev/sda bs=1M", "raw-block-device", "dd writes to raw block device"),
	block(`echo "$(dd if=/dev/zero of=/dev/sda)"`, "raw-block-device", "dd writes"),
	block(`env TRACE=1 command echo "$(dd if=/dev/zero of=/dev/sda)"`, "raw-block-device", "dd writes"),
	block("echo x > /dev/sda", "raw-block-device", rsRaw),
	block("cat image >> /dev/nvme0n1", "raw-block-device", rsRaw),
	block(`echo x >"/dev/sda"`, "raw-block-device", rsRaw),
	block("cat img | tee /dev/mmcblk0", "raw-block-device", rsRaw),
	block(":(){ :|:& };:", "fork-bomb", "fork bomb"),
	block(":(){ :|: & };:", "fork-bomb", "fork bomb"),
	block("bomb(){ bomb|bomb& }; bomb", "fork-bomb", "fork bomb"),
	block("function f { f | f & }; f", "fork-bomb", "fork bomb"),
	block("kill -9 -1", "kill-all", rsKillAll),
	block("kill -KILL -1", "kill-all", rsKillAll),
	block("pkill -9 .", "kill-all", rsKillAll),
	block("killall -r '.*'", "kill-all", rsKillAll),
	block("killall5 -9", "kill-all", rsKillAll),
	block("chmod -R 777 /", "permission-critical-path", rsPerm),
	block("sudo chmod -Rf 000 /etc", "permission-critical-path", rsPerm),
	block("chown -R nobody:nogroup /", "permission-critical-path", rsPerm),
	block("chown --recursive me ~", "permission-critical-path", rsPerm),
}

func TestReview(t *testing.T) {
	if n := len(reviewCases); n < 80 {
		t.Fatalf("only %d review cases", n)
	}
	for _, c := range reviewCases {
		name := c.cmd
		if len(name) > 60 {
			name = name[:60]
		}
		t.Run(name, func(t *testing.T) {
			v := Review(c.cmd)
			if v.Action != c.action || v.Risk != c.risk || v.RuleKey != c.key || !strings.HasPrefix(v.Reason, c.reason) {
				t.Fatalf("Review(%q) = %s/%s %s %q (candidate %s), want %s/%s %s %q…",
					c.cmd, v.Action, v.Risk, v.RuleKey, v.Reason, v.Candidate, c.action, c.risk, c.key, c.reason)
			}
			if len(v.Fingerprint) != 16 {
				t.Fatalf("fingerprint %q, want 16 hex digits", v.Fingerprint)
			}
		})
	}
}
