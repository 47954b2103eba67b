package cmdguard

import "testing"

// TestReviewNeverPanics feeds the inputs that once crashed the guard or
// end a construct at the last byte: bare "$", a shell with -c and no
// script, options missing their value, unterminated quotes of every kind.
func TestReviewNeverPanics(t *testing.T) {
	inputs := []string{"$", "echo $", "echo $ | sh", "sh -c", "bash -c", "sh -c ''", "sh -c | sh", "echo hi | sh -c",
		"env -S", "env -vS", "env -C", "env --split-string", "su -c", "su --command", "eval", "watch", "watch -n",
		"find -exec", "find . -exec", "timeout", "xargs", "xargs -I", "echo x | xargs -I", "sudo", "sudo -u",
		"printf -v", "printf", "printf %", "printf '%' x | sh", "echo \\", "'", "\"", "`", "$(", "<(", "${", "$'",
		"$'\\x", "$'\\u", "$'\\c", "$'\\0", "a=", "a[", "a[=", "x=$", "$x", "${!", "$((", "$[", "((", "[[", "trap",
		"alias", "alias x", "coproc", "for", "for x in", "flock", "flock x -c", "git", "git push", "git branch",
		"sort -o", "tree -o", "date -s", "sed -n -e", "sed -n 's", "sed -n 'y/a", "sed -n '\\", "-", "--", "-x",
		"cat <<<", "sh <<<", "cat <<", "ls >", "ls 2>", "ls &>", "ls |& sh", ":(){", "function", "f() {",
		"rm -rf", "rm --", "chmod -R", "kill", "pkill -u", "killall -r", "dd of=", "mkfs", "{", "}", "!", "(", ")"}
	for _, in := range inputs {
		for _, cmd := range []string{in, in + " ", "echo " + in, in + "; " + in} {
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("Review(%q) panicked: %v", cmd, r)
					}
				}()
				if v := Review(cmd); v.RuleKey == "" || v.Reason == "" {
					t.Errorf("Review(%q) = %+v", cmd, v)
				}
			}()
		}
	}
}
