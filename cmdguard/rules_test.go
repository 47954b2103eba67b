package cmdguard

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestDestructiveTable(t *testing.T) {
	hit := map[string][]string{
		"rm-critical-path":         {"rm -rf /", "rm -r /etc", "rm -R ~", "rm --dir -- /", "find / -delete", "find ~ -exec rm {} ;"},
		"mkfs":                     {"mkfs", "mkfs.vfat x", "mke2fs x"},
		"raw-block-device":         {"dd of=/dev/sda", "dd of=//dev/./sdb", "shred /dev/nvme0", "wipefs /dev/md0", "blkdiscard /dev/dm-0", "sgdisk /dev/disk0", "sfdisk /dev/rdisk1", "cp a /dev/mapper/x", "mv a /dev/vda", "install a /dev/xvda", "tee /dev/hda", "cp -t /dev/sda a", "cp --target-directory=/dev/sda a"},
		"shutdown":                 {"shutdown", "reboot", "halt", "poweroff", "init 6", "telinit 0", "systemctl halt", "systemctl poweroff"},
		"kill-all":                 {"kill -1", "killall5", "pkill .*", "pkill -u root", "pkill --uid=0", "pkill -U 0", "pkill --euid 0", "killall -u root", "killall --user root", "killall --regexp ^.*$"},
		"permission-critical-path": {"chmod -R 0 /", "chown -Rh x ~", "chgrp --recursive x /usr/*", "chmod -R -- 0 /"},
	}
	for key, cmds := range hit {
		for _, c := range cmds {
			f := strings.Fields(c)
			if h := destructive(f[0], f[1:]); h.key != key {
				t.Errorf("destructive(%q) = %q, want %s", c, h.key, key)
			}
		}
	}
	for _, c := range []string{"rm -f /", "rm -rf x", "rm -- -r /", "find . -delete", "find / -name x", "dd if=/dev/sda",
		"dd of=disk.img", "tee x", "cp /dev/sda x", "cp a b", "mv /dev/sda x", "shutdownx", "init 1", "telinit 3",
		"systemctl status", "kill 1", "kill -9 1", "pkill x", "pkill -u root x", "killall .*", "pkill",
		"chmod 0 /", "chmod -R 0 x", "chown -R x /tmp", "chmod --reference=/ x", "mkdirfs", "ls /", "wipefs x", "sfdisk",
		"install a", "cp"} {
		f := strings.Fields(c)
		if h := destructive(f[0], f[1:]); h.found() {
			t.Errorf("destructive(%q) = %q, want none", c, h.key)
		}
	}
	if !anyOf([]string{"a", "b"}, "x", "b") || anyOf([]string{"a"}, "b") || anyOf(nil, "a") {
		t.Error("anyOf")
	}
	if !slices.Contains([]string{"a", "b"}, "b") || slices.Contains([]string{"a"}, "b") {
		t.Error("contains")
	}
}

func TestCriticalTargetMore(t *testing.T) {
	for _, p := range []string{"~user", "~user/", "~user/*", "${HOME}", "$HOME/*", "/opt", "/System", "/*/", "/?", "/[a]"} {
		if !criticalTarget(p) {
			t.Errorf("criticalTarget(%q) = false", p)
		}
	}
	for _, p := range []string{"~user/x", "$HOMEx", "${HOME}x", "$HOME/x", "/opt/x/*", "/etc/x/y", "/tmp/*", "/home/a/b", "~/a/*", "/etc/a*"} {
		if criticalTarget(p) {
			t.Errorf("criticalTarget(%q) = true", p)
		}
	}
	if !broadGlob("*") || !broadGlob(".*") || !broadGlob("?*") || broadGlob("?") || broadGlob("a*") || broadGlob("") {
		t.Error("broadGlob")
	}
	if !hasGlob("a*") || !hasGlob("?") || !hasGlob("[") || hasGlob("a") {
		t.Error("hasGlob")
	}
	if cleanPath("//a/./b") != "/a/b" || cleanPath("a//b") != "a//b" {
		t.Error("cleanPath")
	}
	for p, want := range map[string]bool{"": true, ".": true, ".*": true, ".+": true, "..*": true, ".?": true, "(.*)": true,
		"^.*$": true, "^$": true, "a": false, ".a": false, "x.*": false} {
		if matchesAll(p) != want {
			t.Errorf("matchesAll(%q) != %v", p, want)
		}
	}
	if findDeletes([]string{"-exec", "cat", "rm"}) || !findDeletes([]string{"-execdir", "/bin/rm"}) || findDeletes([]string{"-exec"}) || findDeletes([]string{"-ok", "rm"}) {
		t.Error("findDeletes")
	}
	if findDeletesCritical([]string{".", "/", "-delete"}) != true || findDeletesCritical([]string{".", "-delete", "/"}) || findDeletesCritical([]string{"(", "/", "-delete"}) || findDeletesCritical([]string{"!", "/", "-delete"}) {
		t.Error("findDeletesCritical")
	}
	if permissionTargetsCritical([]string{"--", "-R", "/"}) || !permissionTargetsCritical([]string{"-R", "--", "/"}) {
		t.Error("permissionTargetsCritical and --")
	}
	if criticalTarget("xhome") || criticalTarget("etc") || criticalTarget("") {
		t.Error("relative critical target")
	}
	if rmTargetsCritical([]string{"-", "/"}) || !rmTargetsCritical([]string{"/", "-r"}) {
		t.Error("rmTargetsCritical")
	}
}

func TestNestedScriptsAndCommands(t *testing.T) {
	for _, tt := range []struct {
		name string
		args string
		want []string
	}{
		{"sh", "-c x", []string{"x"}},
		{"sh", "-c", nil},
		{"sh", "x.sh", nil},
		{"eval", "a b", []string{"a b"}},
		{"eval", "", nil},
		{"su", "-c x", []string{"x"}},
		{"runuser", "-lc x", []string{"x"}},
		{"script", "-q --command=x", []string{"x"}},
		{"su", "--com x", []string{"x"}},
		{"su", "-cx", []string{"x"}},
		{"su", "-- -c x", nil},
		{"su", "-c", nil},
		{"su", "-l root", nil},
		{"su", "x cat", nil},
		{"watch", "-n 1 -d a b", []string{"a b"}},
		{"watch", "--interval 1 a", []string{"a"}},
		{"watch", "-n", nil},
		{"trap", "-- x EXIT", []string{"x"}},
		{"trap", "-p", nil},
		{"alias", "a=b c d=e", []string{"b", "e"}},
		{"ls", "-c x", nil},
	} {
		if got := nestedScripts(tt.name, strings.Fields(tt.args)); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("nestedScripts(%s %s) = %q, want %q", tt.name, tt.args, got, tt.want)
		}
	}
	got := nestedCommands("find", strings.Fields("/ -exec rm {} ; -ok ls + -exec ;"))
	want := [][]string{{"rm", "{}"}, {"rm", "/"}, {"ls"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("nestedCommands = %q, want %q", got, want)
	}
	if nestedCommands("ls", []string{"-exec", "rm"}) != nil {
		t.Error("nestedCommands for ls")
	}
	if got := findStarts([]string{"-name", "x"}); !reflect.DeepEqual(got, []string{"."}) {
		t.Errorf("findStarts = %q", got)
	}
	if got := findStarts([]string{"a", "b", "!", "c"}); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Errorf("findStarts = %q", got)
	}
}

func TestShellInvocation(t *testing.T) {
	for args, want := range map[string]shellCall{
		"":                  {stdin: true},
		"-s":                {stdin: true},
		"-s x":              {stdin: true},
		"-":                 {stdin: true},
		"--":                {stdin: true},
		"x.sh":              {},
		"-e x.sh":           {},
		"-c x":              {script: "x", dashC: true},
		"-ce x":             {script: "x", dashC: true},
		"-c -e x":           {script: "x", dashC: true},
		"-c -- x":           {script: "x", dashC: true},
		"-sc x":             {script: "x", dashC: true},
		"+c x":              {script: "x", dashC: true},
		"-c":                {dashC: true},
		"-o posix -c x":     {script: "x", dashC: true},
		"+O extglob -c x":   {script: "x", dashC: true},
		"--rcfile f -c x":   {script: "x", dashC: true},
		"--rcfile=f -c x":   {script: "x", dashC: true},
		"--init-file f x":   {},
		"--norc -c x":       {script: "x", dashC: true},
		"--login":           {stdin: true},
		"--norc x.sh":       {},
		"--restricted x.sh": {},
		"-o":                {stdin: true},
	} {
		if got := shellInvocation(strings.Fields(args)); got != want {
			t.Errorf("shellInvocation(%q) = %+v, want %+v", args, got, want)
		}
	}
}

func TestPipedInputAndStdin(t *testing.T) {
	lexed := func(s string) (simpleCommand, []string) {
		c := lexCommands(s)[0]
		var ws []string
		for _, w := range c.words {
			ws = append(ws, w.text)
		}
		return c, ws
	}
	for in, want := range map[string]string{
		`echo 'a\nb'`:            "a\nb",
		`echo -e 'a\tb'`:         "-e a\tb",
		`printf '%s-%s|' a b c`:  "a-b|c-|",
		`printf 'x%%y%d' 5`:      "x%y5",
		`printf '%b' 'a\nb'`:     "a\nb",
		`printf '%5s'`:           "",
		`printf abc`:             "abc",
		`printf 'a%'`:            "a%",
		`printf -- 'x'`:          "x",
		`printf -v v x`:          "",
		`printf`:                 "",
		`(echo x)`:               "x",
		`sudo echo x`:            "x",
		`cat <<< 'rm'`:           "rm",
		`printf '%s' a b c`:      "abc",
		`printf '%-3.1s|' ab cd`: "ab|cd|",
	} {
		c, ws := lexed(in)
		got, ok := pipedInput(c, ws)
		if !ok || got != want {
			t.Errorf("pipedInput(%q) = %q %v, want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"cat x", "ls", "cat < x"} {
		c, ws := lexed(in)
		if _, ok := pipedInput(c, ws); ok {
			t.Errorf("pipedInput(%q) known", in)
		}
	}
	scripts, cmds := stdinScripts([]string{"sh", "-s"}, "x")
	if !reflect.DeepEqual(scripts, []string{"x"}) || cmds != nil {
		t.Errorf("stdinScripts(sh -s) = %q %q", scripts, cmds)
	}
	scripts, cmds = stdinScripts([]string{"sh", "f.sh"}, "x")
	if scripts != nil || cmds != nil {
		t.Errorf("stdinScripts(sh f.sh) = %q %q", scripts, cmds)
	}
	if _, cmds := stdinScripts([]string{"xargs", "xargs", "echo"}, "a"); len(cmds) != 1 {
		t.Errorf("xargs xargs = %q", cmds)
	}
	_, cmds = stdinScripts([]string{"sudo", "xargs", "-n1", "rm", "-rf"}, "/ x")
	if want := [][]string{{"rm", "-rf", "/", "x"}}; !reflect.DeepEqual(cmds, want) {
		t.Errorf("xargs = %q, want %q", cmds, want)
	}
	for args, want := range map[string][][]string{
		"":                 {{"echo", "a", "b"}},
		"-I{} rm {} z":     {{"rm", "a b", "z"}, {"rm", "{}", "z", "a", "b"}},
		"-i rm {}":         {{"rm", "a b"}, {"rm", "{}", "a", "b"}},
		"-IX rm X":         {{"rm", "a b"}, {"rm", "X", "a", "b"}},
		"--replace=Y rm Y": {{"rm", "a b"}, {"rm", "Y", "a", "b"}},
		"-n 1 rm":          {{"rm", "a", "b"}},
	} {
		if got := xargsCommands(strings.Fields(args), "a b"); !reflect.DeepEqual(got, want) {
			t.Errorf("xargsCommands(%q) = %q, want %q", args, got, want)
		}
	}
	if got := xargsCommands([]string{"-I{}", "rm", "{}"}, "a\n b \n"); !reflect.DeepEqual(got[:3], [][]string{{"rm", "a"}, {"rm", "b"}, {"rm", ""}}) {
		t.Errorf("xargs lines = %q", got)
	}
	if unescape(`a\n\t\r\\b`) != "a\n\t\r\\b" {
		t.Error("unescape")
	}
}

func TestParseOptions(t *testing.T) {
	spec := optSpec{short: "fo", optional: "i", long: []string{"--file", "--output"}}
	opts, operands := parseOpts(strings.Fields("a -xf v b -o w -iSUF --file x --fi=y --out z --other q -- -f c -"), spec)
	want := []opt{{"-x", ""}, {"-f", "v"}, {"-o", "w"}, {"-i", "SUF"}, {"--file", "x"}, {"--fi", "y"}, {"--out", "z"}, {"--other", ""}}
	if !reflect.DeepEqual(opts, want) {
		t.Errorf("opts = %+v, want %+v", opts, want)
	}
	if wantOps := []string{"a", "b", "q", "-f", "c", "-"}; !reflect.DeepEqual(operands, wantOps) {
		t.Errorf("operands = %q, want %q", operands, wantOps)
	}
	// A value-taking option at the very end has an empty value.
	if opts, _ := parseOpts([]string{"-f"}, spec); !reflect.DeepEqual(opts, []opt{{"-f", ""}}) {
		t.Errorf("trailing -f = %+v", opts)
	}
	if opts, _ := parseOpts([]string{"--file"}, spec); !reflect.DeepEqual(opts, []opt{{"--file", ""}}) {
		t.Errorf("trailing --file = %+v", opts)
	}
	if opts, _ := parseOpts([]string{"-fvalue", "x"}, spec); !reflect.DeepEqual(opts, []opt{{"-f", "value"}}) {
		t.Errorf("attached = %+v", opts)
	}
	if !longMatches("--out", "--output") || !longMatches("--output", "--output") || longMatches("--", "--output") ||
		longMatches("--outputx", "--output") || longMatches("--x", "--output") {
		t.Error("longMatches")
	}
	if !isLong("--in=x", "--in-place") || isLong("-i", "--in-place") || isLong("--inx", "--in-place") || !isLong("--b", "--a", "--b") {
		t.Error("isLong")
	}
	if !takesLong("--fi", spec.long) || takesLong("--x", spec.long) {
		t.Error("takesLong")
	}
	o := opt{name: "--ou"}
	if !o.named("-x", "--output") || o.named("-o") || (opt{name: "-o"}).named("--output") || !(opt{name: "-o"}).named("-o") {
		t.Error("named")
	}
	if got := values([]opt{{"-f", "a"}, {"-o", "b"}, {"--fil", "c"}}, "-f", "--file"); !reflect.DeepEqual(got, []string{"a", "c"}) {
		t.Errorf("values = %q", got)
	}
	if !isOption("-x") || isOption("-") || isOption("--") || isOption("x") {
		t.Error("isOption")
	}
}

func TestSedScripts(t *testing.T) {
	for script, want := range map[string]sedEffects{
		"":                  {},
		"  \n;":             {},
		"$p":                {},
		"1~3p":              {},
		"/a/I,/b/Mp":        {},
		`\,a,p`:             {},
		"1,+3p":             {},
		"1,~4p":             {},
		"1!p":               {},
		"1 ! p":             {},
		"y/abc/xyz/":        {},
		"y/a/b/w x":         {write: true},
		"s/a/b/gw x":        {write: true},
		"s/a/b/ w x":        {write: true},
		"s/a/b/e":           {exec: true},
		"s/a/b/;w x":        {write: true},
		"s/a/b/}":           {},
		"{p}":               {},
		":a;ba":             {},
		"b end; w x":        {write: true},
		"q5;w x":            {write: true},
		"l 20":              {},
		"a text\\\nw x":     {},
		"i\\\nmore":         {},
		"c x\nw y":          {write: true},
		"# w x\np":          {},
		"e":                 {exec: true},
		"F;z;=;D;G;H;N;P;x": {},
		"R x":               {read: true},
		"W x":               {write: true},
		"s":                 {unreadable: true},
		"s\\a\\b\\":         {unreadable: true},
		"s\na\nb\n":         {unreadable: true},
		"s/a/b":             {unreadable: true},
		"/a":                {unreadable: true},
		"1,/a":              {unreadable: true},
		`\`:                 {unreadable: true},
		"1,":                {},
		"1":                 {},
		"v 4.2":             {},
		"T x;t y":           {},
		"+3p":               {unreadable: true},
		"y/a/b/I":           {unreadable: true},
		"s/a/b/I":           {},
		"s/a/b/2gI;p":       {},
	} {
		if got := analyseSed(script); got != want {
			t.Errorf("analyseSed(%q) = %+v, want %+v", script, got, want)
		}
	}
	for args, key := range map[string]string{
		"-n p x":              "",
		"-n -e p -e w x":      "file-write",
		"-n --expression=R x": "file-read",
		"-n --exp e":          "project-code-execution",
		"-n k":                "project-code-execution",
		"-n":                  "",
		"-n -e p 'w x'":       "",
		"-n -e r -e e -e k":   "file-read",
		"-n -e e -e k":        "project-code-execution",
	} {
		if _, got := promptableSed(strings.Fields(args)); got != key {
			t.Errorf("promptableSed(%q) = %q, want %q", args, got, key)
		}
	}
}

func TestSafeKind(t *testing.T) {
	for cmd, want := range map[string]kind{
		"ls": kindRead, "sed -n p": kindRead, "sed --quiet p": kindUnknown, "sed p": kindUnknown, "sed n": kindUnknown,
		"git status": kindRead, "git push": kindUnknown, "git": kindUnknown, "pytest": kindDev, "python -m pytest": kindDev,
		"python3 -m compileall": kindDev, "python -m http.server": kindUnknown, "python": kindUnknown,
		"uv run ls": kindDev, "uv run pytest": kindDev, "uv run x": kindUnknown, "uv --version": kindDev,
		"uv version": kindDev, "uv sync": kindUnknown, "npm test": kindDev, "npm run test:unit": kindDev,
		"npm run": kindUnknown, "npm run deploy": kindUnknown, "npm exec": kindUnknown, "yarn build": kindUnknown,
		"pnpm exec": kindUnknown, "npm": kindUnknown, "go test": kindDev, "go vet": kindDev, "go run x": kindUnknown,
		"cargo fmt --check": kindDev, "cargo fmt": kindUnknown, "cargo run": kindUnknown, "make": kindUnknown,
		"make -j4 test": kindDev, "make test deploy": kindUnknown, "A=1": kindUnknown, "frob": kindUnknown,
	} {
		if got := safeKind(strings.Fields(cmd)); got != want {
			t.Errorf("safeKind(%q) = %v, want %v", cmd, got, want)
		}
	}
	for cmd, want := range map[string]bool{
		"status": true, "diff": true, "log": true, "show": true, "rev-parse": true, "ls-files": true, "grep": true,
		"describe": true, "remote": true, "remote -v": true, "remote --verbose": true, "remote -v x": false,
		"remote get-url origin": true, "remote add": false, "branch": true, "branch --show-current": true,
		"branch --show-current x": false, "branch --list x": true, "branch -l": true, "branch -a": false,
		"tag": true, "tag --list": true, "tag -l v*": true, "tag x": false, "worktree list": true,
		"worktree": false, "worktree add": false, "": false, "commit": false,
	} {
		if got := isSafeGit(strings.Fields(cmd)); got != want {
			t.Errorf("isSafeGit(%q) = %v", cmd, got)
		}
	}
}

func TestTokenHelpers(t *testing.T) {
	if !hasShortFlag([]string{"-xc"}, "c") || hasShortFlag([]string{"--c"}, "c") || hasShortFlag([]string{"c", "--"}, "c") ||
		!hasShortFlag([]string{"--in"}, "x", "i") || hasShortFlag([]string{"--in"}, "x") || !hasShortFlag([]string{"-a", "-e"}, "c", "e") {
		t.Error("hasShortFlag")
	}
	if !hasPrefix([]string{"a", "b", "c"}, "a", "b") || hasPrefix([]string{"a"}, "a", "b") || hasPrefix([]string{"a", "c"}, "a", "b") || !hasPrefix(nil) {
		t.Error("hasPrefix")
	}
	if uvChangesDependencies(nil) || nodeChangesDependencies(nil) || !uvChangesDependencies([]string{"lock"}) || !nodeChangesDependencies([]string{"ci"}) {
		t.Error("dependency helpers")
	}
	if uniqWritesFile([]string{"a"}) || !uniqWritesFile([]string{"-f", "1", "a", "b"}) || uniqWritesFile([]string{"a", "-"}) || uniqWritesFile([]string{"-f", "a", "b"}) {
		t.Error("uniqWritesFile")
	}
	if !anyDashContains([]string{"x", "-fd"}, "f") || anyDashContains([]string{"f"}, "f") || anyDashContains([]string{"-x"}, "f") {
		t.Error("anyDashContains")
	}
	if reason, key := promptableGit(nil); reason != "" || key != "" {
		t.Error("promptableGit(nil)")
	}
	if gitLong("--text", "--textconv") || !gitLong("--tex", "--textconv") || !gitLong("--textconv=x", "--textconv") {
		t.Error("gitLong")
	}
	for args, want := range map[string]bool{"-D x": true, "-d -f": true, "-fd": true, "--delete --force": true,
		"-d": false, "-f": false, "--force": false, "--del": false, "x": false} {
		if branchForceDeletes(strings.Fields(args)) != want {
			t.Errorf("branchForceDeletes(%q) != %v", args, want)
		}
	}
	for args, want := range map[string]bool{"--force": true, "-f": true, "-uf": true, "-d x": true, "+m": true, ":m": true,
		"--fo": true, "--delete": true, "--mirror": true, "--prune": true, "origin main": false, "-u origin": false,
		"--follow-tags": false, "+": false, ":": false, "--no-force": false} {
		if pushForces(strings.Fields(args)) != want {
			t.Errorf("pushForces(%q) != %v", args, want)
		}
	}
}

func TestTextHardline(t *testing.T) {
	for text, key := range map[string]string{
		":(){ :|:& };:":           "fork-bomb",
		"X(){ X|X& }; X":          "fork-bomb",
		"function b { b & }":      "fork-bomb",
		"function b() { b | b; }": "fork-bomb",
		"echo > /dev/sda":         "raw-block-device",
		"echo >/DEV/SDA":          "raw-block-device",
		"f(){ echo|cat; }":        "",
		"f(){ g|g& }":             "",
		"f(){ f; }":               "",
		"echo > /dev/null":        "",
		"no braces f|f&":          "",
	} {
		if got := textHardline(text); got.key != key {
			t.Errorf("textHardline(%q) = %q, want %q", text, got.key, key)
		}
	}
	if selfSpawningFunction("f() { f | x }") != true || selfSpawningFunction("f() { x }") {
		t.Error("selfSpawningFunction")
	}
	for words, want := range map[string]bool{"sudo -S id": true, "x sudo -kS": true, "sudo -- -S": false, "sudo --stdin": true,
		"sudo --st": true, "sudo --s": true, "sudo --set-home": false, "sudo -s": false, "S -S": false, "/usr/bin/sudo -S": true} {
		if containsSudoStdin(strings.Fields(words)) != want {
			t.Errorf("containsSudoStdin(%q) != %v", words, want)
		}
	}
}

func TestVerdictOrdering(t *testing.T) {
	if Allow.rank() != 0 || Prompt.rank() != 1 || Block.rank() != 2 || Action("x").rank() != 2 {
		t.Error("rank")
	}
	if riskRank(RiskLow) != 0 || riskRank(RiskMedium) != 1 || riskRank(RiskHigh) != 2 || riskRank(RiskCritical) != 3 || riskRank("x") != 3 {
		t.Error("riskRank")
	}
	p, b := promptVerdict("r", "k"), blockVerdict(hardline{"r", "k"})
	if !stricter(b, p) || stricter(p, b) || stricter(p, p) || !stricter(Verdict{Action: Prompt, Risk: RiskCritical}, p) ||
		stricter(Verdict{Action: Prompt, Risk: RiskLow}, p) {
		t.Error("stricter")
	}
	if b.Action != Block || b.Risk != RiskCritical || b.Reason != "r" || b.RuleKey != "k" {
		t.Errorf("blockVerdict = %+v", b)
	}
	if (hardline{}).found() || !(hardline{key: "k"}).found() {
		t.Error("found")
	}
}

// TestReviewCandidateChoice: the strictest candidate decides, a tie keeps
// the earlier one, and the NUL path reports the form that blocked.
func TestReviewCandidateChoice(t *testing.T) {
	// raw: unknown "ｌs" prompt; normalized: "ls" allow. The prompt wins.
	if v := Review("ｌs"); v.Action != Prompt || v.Candidate != CandidateRaw {
		t.Errorf("Review(ｌs) = %+v", v)
	}
	// Both prompt with the same risk: the raw form is kept.
	if v := Review("\x1b[1mfrob\x1b[0m"); v.Candidate != CandidateRaw {
		t.Errorf("tie kept %s", v.Candidate)
	}
	if v := Review("rм -rf /\x00"); v.Action != Block || v.Candidate != CandidateNormalized {
		t.Errorf("NUL block = %+v", v)
	}
	if v := Review("ls\x00"); v.Candidate != CandidateRaw || !v.Exact || v.RuleKey != "complex-shell" {
		t.Errorf("NUL prompt = %+v", v)
	}
	if v := Review(`echo \`); v.Reason != "command has unsupported quoting" {
		t.Errorf("unsupported quoting = %+v", v)
	}
	if v := Review(""); v.RuleKey != "empty-command" || v.Candidate != CandidateRaw || v.Exact {
		t.Errorf("empty = %+v", v)
	}
	if v := reviewCandidate(""); v.RuleKey != "empty-command" {
		t.Errorf("empty candidate = %+v", v)
	}
	// A compound command is exact even when its key is coarse; a single
	// one is not.
	if v := Review("ls && rm x"); !v.Exact || v.RuleKey != "file-delete" {
		t.Errorf("compound = %+v", v)
	}
	if v := Review("go test"); v.Exact {
		t.Errorf("single dev command exact")
	}
	if v := Review("ls && go test"); !v.Exact || v.RuleKey != "project-code-execution" {
		t.Errorf("compound dev = %+v", v)
	}
	if v := Review("ls; frob"); !v.Exact || v.RuleKey != "unknown-command" || v.Reason != "unrecognized terminal command: frob" {
		t.Errorf("compound unknown = %+v", v)
	}
	if v := Review("A=1 && ls"); v.Reason != "unrecognized terminal command: <empty>" {
		t.Errorf("assignment only = %+v", v)
	}
}
