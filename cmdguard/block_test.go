package cmdguard

import (
	"strings"
	"testing"
)

// q quotes s for the shell in single quotes.
func q(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// codeContexts are the places bash runs a payload as code. Every block
// rule must fire in each of them: a destructive command is destructive
// wherever bash evaluates it.
var codeContexts = []struct {
	name string
	wrap func(p string) string
}{
	{"bare", func(p string) string { return p }},
	{"last of a chain", func(p string) string { return "ls; " + p }},
	{"first of a chain", func(p string) string { return p + "; ls" }},
	{"after &&", func(p string) string { return "ls && " + p }},
	{"after ||", func(p string) string { return "false || " + p }},
	{"after &", func(p string) string { return "sleep 1 & " + p }},
	{"second line", func(p string) string { return "ls\n" + p }},
	{"piped", func(p string) string { return "ls | " + p }},
	{"subshell", func(p string) string { return "(" + p + ")" }},
	{"group", func(p string) string { return "{ " + p + "; }" }},
	{"if", func(p string) string { return "if true; then " + p + "; fi" }},
	{"function", func(p string) string { return "f() { " + p + "; }; f" }},
	{"negated", func(p string) string { return "! " + p }},
	{"coproc", func(p string) string { return "coproc " + p }},
	{"$()", func(p string) string { return "echo $(" + p + ")" }},
	{"quoted $()", func(p string) string { return `echo "$(` + p + `)"` }},
	{"backticks", func(p string) string { return "echo `" + p + "`" }},
	{"<()", func(p string) string { return "cat <(" + p + ")" }},
	{">()", func(p string) string { return "ls > >(" + p + ")" }},
	{"${:-}", func(p string) string { return "echo ${x:-$(" + p + ")}" }},
	{"${[]}", func(p string) string { return "echo ${a[$(" + p + ")]}" }},
	{"$(())", func(p string) string { return "echo $(( $(" + p + ") ))" }},
	{"sh -c", func(p string) string { return "sh -c " + q(p) }},
	{"bash -lc", func(p string) string { return "bash -lc " + q(p) }},
	{"bash -c --", func(p string) string { return "bash -c -- " + q(p) }},
	{"bash -e -c", func(p string) string { return "bash -e -c " + q(p) }},
	{"bash -o opt -c", func(p string) string { return "bash -o errexit -c " + q(p) }},
	{"nested sh -c", func(p string) string { return "sh -c " + q("sh -c "+q(p)) }},
	{"eval", func(p string) string { return "eval " + q(p) }},
	{"env -S", func(p string) string { return "env -S " + q(p) }},
	{"env --split-string=", func(p string) string { return "env --split-string=" + q(p) }},
	{"env --sp", func(p string) string { return "env --sp " + q(p) }},
	{"su -c", func(p string) string { return "su -c " + q(p) + " root" }},
	{"su --command=", func(p string) string { return "su --command=" + q(p) }},
	{"watch", func(p string) string { return "watch -n 1 " + p }},
	{"trap", func(p string) string { return "trap " + q(p) + " EXIT" }},
	{"alias", func(p string) string { return "alias ll=" + q(p) }},
	{"find -exec sh -c", func(p string) string { return "find . -exec sh -c " + q(p) + ` \;` }},
	{"xargs sh -c", func(p string) string { return "xargs sh -c " + q(p) }},
	{"heredoc to bash", func(p string) string { return "bash <<EOF\n" + p + "\nEOF" }},
	{"here-string to sh", func(p string) string { return "sh <<<" + q(p) }},
	{"here-string through cat", func(p string) string { return "cat <<< " + q(p) + " | sh" }},
	{"echo | sh", func(p string) string { return "echo " + q(p) + " | sh" }},
	{"echo | sh -s", func(p string) string { return "echo " + q(p) + " | sh -s" }},
	{"echo | bash -", func(p string) string { return "echo " + q(p) + " | bash -" }},
	{"printf | sh", func(p string) string { return "printf " + q(p) + " | sh" }},
	{"printf %s | sh", func(p string) string { return "printf '%s\\n' " + q(p) + " | sh" }},
	{"sudo", func(p string) string { return "sudo " + p }},
	{"sudo -u", func(p string) string { return "sudo -u root " + p }},
	{"sudo -Eu", func(p string) string { return "sudo -Eu root " + p }},
	{"sudo --us", func(p string) string { return "sudo --us root " + p }},
	{"env -u", func(p string) string { return "env -u HOME " + p }},
	{"env -", func(p string) string { return "env - " + p }},
	{"timeout", func(p string) string { return "timeout -s KILL 5 " + p }},
	{"nice --adj", func(p string) string { return "nice --adj 5 " + p }},
	{"nohup", func(p string) string { return "nohup " + p }},
	{"exec -a", func(p string) string { return "exec -a x " + p }},
	{"time -p", func(p string) string { return "time -p " + p }},
	{"assignment prefix", func(p string) string { return "A=1 " + p }},
	{"array assignment prefix", func(p string) string { return "a[1]=2 " + p }},
	{"printf -v subscript", func(p string) string { return "printf -v " + q("a[$("+p+")]") + " 1" }},
	{"read subscript", func(p string) string { return "read " + q("a[$("+p+")]") }},
	{"declare subscript", func(p string) string { return "declare " + q("a[$("+p+")]=1") }},
	{"declare -a compound", func(p string) string { return "declare -a " + q("a=($("+p+"))") }},
	{"local subscript", func(p string) string { return "local " + q("a[$("+p+")]=1") }},
	{"export subscript", func(p string) string { return "export " + q("a[$("+p+")]=1") }},
	{"let", func(p string) string { return "let " + q("a[$("+p+")]=1") }},
	{"unset", func(p string) string { return "unset " + q("a[$("+p+")]") }},
	{"(( ))", func(p string) string { return "(( " + q("a[$("+p+")]") + " ))" }},
	{"$(( ))", func(p string) string { return "echo $(( " + q("a[$("+p+")]") + " ))" }},
	{"[[ -eq ]]", func(p string) string { return "[[ 1 -eq " + q("a[$("+p+")]") + " ]]" }},
	{"[[ -v ]]", func(p string) string { return "[[ -v " + q("a[$("+p+")]") + " ]]" }},
	{"test -v", func(p string) string { return "test -v " + q("a[$("+p+")]") }},
	{"quoted ${[]}", func(p string) string { return "echo ${a[" + q("$("+p+")") + "]}" }},
	{"element assignment", func(p string) string { return "b[" + q("$("+p+")") + "]=1" }},
	{"value evaluated later", func(p string) string { return "x=" + q("a[$("+p+")]") + "; echo $((x))" }},
	{"indirect", func(p string) string { return "r=" + q("a[$("+p+")]") + "; echo ${!r}" }},
	{"$'' escapes", func(p string) string { return "printf -v $'a[\\x24(" + p + ")]' 1" }},
}

// blockPayloads are, per block rule, commands that must block; each is
// written so that it survives every code context.
var blockPayloads = []struct {
	key      string
	payloads []string
}{
	{"rm-critical-path", []string{"rm -rf /", "rm -Rf ~", "rm --recursive --force /etc", "rm -r -- /usr/*",
		"RM -RF /", "/bin/rm -rf $HOME", "find / -delete", "rm -rf ~root", "rm --rec -f /"}},
	{"mkfs", []string{"mkfs.ext4 /dev/sda1", "mkfs -t ext4 /dev/sdb", "mke2fs /dev/sdc", "MKFS.XFS /dev/sdd"}},
	{"raw-block-device", []string{"dd if=/dev/zero of=/dev/sda", "cp x.img /dev/nvme0n1", "tee /dev/mmcblk0",
		"shred /dev/sda", "cp -t /dev/sdb x"}},
	{"sudo-stdin", []string{"sudo -S id", "sudo -kS id", "sudo --stdin id", "sudo --std id"}},
	{"shutdown", []string{"shutdown now", "reboot", "poweroff", "halt -p", "init 0", "telinit 6",
		"systemctl reboot", "systemctl kexec", "SHUTDOWN -h now"}},
	{"kill-all", []string{"kill -9 -1", "kill -KILL -1", "pkill -9 .", "pkill -u root", "killall -r .*",
		"killall5 -9", "pkill --euid root"}},
	{"permission-critical-path", []string{"chmod -R 777 /", "chown -R nobody /etc", "chgrp -R x ~",
		"chmod --recursive 000 /", "chmod --rec 000 /usr", "chown --recur me ~"}},
}

func TestBlockRulesInEveryCodeContext(t *testing.T) {
	for _, rule := range blockPayloads {
		for _, p := range rule.payloads {
			for _, ctx := range codeContexts {
				cmd := ctx.wrap(p)
				v := Review(cmd)
				if v.Action != Block || v.RuleKey != rule.key || v.Risk != RiskCritical {
					t.Errorf("%s: Review(%q) = %s %s %q, want block %s", ctx.name, cmd, v.Action, v.RuleKey, v.Reason, rule.key)
				}
			}
		}
	}
}

// TestFuzzSeedsBlock: every bypass found while hardening the guard is a
// fuzz seed (testdata/fuzz/FuzzReview) and must stay blocked.
func TestBypassCorpusBlocks(t *testing.T) {
	for _, cmd := range bypassCorpus {
		if v := Review(cmd); v.Action != Block {
			t.Errorf("Review(%q) = %s %s %q, want block", cmd, v.Action, v.RuleKey, v.Reason)
		}
	}
}

// bypassCorpus lists commands that once passed the guard (allowed or only
// prompted) although bash runs a destructive payload in them.
var bypassCorpus = []string{
	"printf -v 'a[$(rm -rf ~)]' 1",
	"printf -v $'a[\\x24(rm -rf ~)]' 1",
	"read 'a[$(rm -rf /)]'",
	"declare 'a[$(rm -rf /)]=1'",
	"declare -a 'a=($(rm -rf /))'",
	"typeset 'a[$(rm -rf /)]=1'",
	"local 'a[$(rm -rf /)]=1'",
	"export 'a[$(rm -rf /)]=1'",
	"readonly 'a[$(rm -rf /)]=1'",
	"declare -n r='a[$(rm -rf /)]'",
	"let 'a[$(rm -rf /)]=1'",
	"unset 'a[$(rm -rf /)]'",
	"(( 'a[$(rm -rf /)]' ))",
	"echo $(( 'a[$(rm -rf /)]' ))",
	"echo $[ 'a[$(rm -rf /)]' ]",
	"[[ 1 -eq 'a[$(rm -rf /)]' ]]",
	"[[ 'a[$(rm -rf /)]' -eq 1 ]]",
	"[[ -v 'a[$(rm -rf /)]' ]]",
	"test -v 'a[$(rm -rf /)]'",
	"[ -v 'a[$(rm -rf /)]' ]",
	"for (( i='a[$(rm -rf /)]'; i<1; i++ )); do :; done",
	"declare -i x='a[$(rm -rf /)]'",
	"x='a[$(rm -rf /)]'; echo ${!x}",
	"x='a[$(rm -rf /)]'; echo $((x))",
	"x='a[$(rm -rf /)]'; [[ x -eq 1 ]]",
	"x='a[$(rm -rf /)]'; echo ${PATH:x}",
	"echo ${a['$(rm -rf /)']}",
	"echo \"${x:-'$(rm -rf /)'}\"",
	"b['$(rm -rf /)']=1",
	"sh <<<'rm -rf /'",
	"bash -s <<< 'rm -rf /'",
	"cat <<< 'rm -rf /' | sh",
	"echo 'rm -rf /' | bash -",
	"echo 'rm -rf /' | sh -s x",
	"printf 'r%sm -rf /' '' | sh",
	"echo / | xargs rm -rf",
	"printf '/\\n' | xargs rm -rf",
	"echo / | xargs -I{} rm -rf {}",
	"xargs rm -rf <<< /",
	"find / -maxdepth 0 -exec rm -rf {} \\;",
	"trap 'rm -rf /' EXIT",
	"alias ls='rm -rf /'",
	"coproc rm -rf /",
	"coproc x { rm -rf /; }",
	"for x in /; do rm -rf $x; done",
	"a[1]=2 rm -rf /",
	"bash -c -- 'rm -rf /'",
	"bash -e -c 'rm -rf /'",
	"bash --rcfile x -c 'rm -rf /'",
	"env --split='rm -rf /'",
	"env --sp 'rm -rf /'",
	"env - rm -rf /",
	"sudo -Eu root rm -rf /",
	"sudo --us root rm -rf /",
	"sudo --std id",
	"nice --adj 5 rm -rf /",
	"timeout --sig KILL 5 rm -rf /",
	"chmod --rec 777 /",
	"chown --recur x /",
	"pkill --euid root",
	"RM -RF /",
	"flock x -c 'rm -rf /'",
	"ls >; rm -rf /",
	"ls; \x1dsudo -S",
	"ls; r\x01m -rf /",
}

// TestBlockNearMisses: commands next to a block rule that must not block.
func TestBlockNearMisses(t *testing.T) {
	for _, cmd := range []string{
		"rm -rf build", "rm -f /", "rm -rf /tmp/x", "rm -rf ~/project", "rm -r ./", "echo rm -rf /",
		"echo 'rm -rf /'", "grep 'rm -rf /' notes.txt", "mkdir mkfs", "mkfifo p", "dd if=/dev/sda of=disk.img",
		"echo x > /dev/null", "cp /dev/sda x.img", "tee out.txt", "sudo -s", "sudo -u S id", "sudo -- -S",
		"shutdownx", "systemctl status", "init 3", "telinit 1", "kill -9 1234", "kill -15 -- 1234",
		"pkill node", "pkill -u root node", "killall -r node", "killall .", "chmod -R 755 build",
		"chmod 777 /", "chown -R me build", "chmod --reference=x /etc/y", "f(){ echo hi; }; f",
		"find / -name x", "find . -delete", "echo 'rm -rf /' | cat", "echo 'rm -rf /' | sh script.sh",
		"echo 'rm -rf /' | sh -c 'cat'", "echo / | xargs ls", "xargs rm -rf", "printf -v x 'rm -rf /'",
		"command -v rm -rf /", "x='rm -rf /'", "trap - EXIT", "sh script.sh 'rm -rf /'", "printf -- '%s' 'rm -rf /'",
		"echo 'shutdown now' | tee x", "cat <<< 'rm -rf /'", "sh -c", "bash -c", "echo $", "sh -c ''",
		"echo 'rm -rf /'; sh", "cat > 'a[$(x)]'",
	} {
		if v := Review(cmd); v.Action == Block {
			t.Errorf("Review(%q) = block %s %q, want no block", cmd, v.RuleKey, v.Reason)
		}
	}
}
