package terminal

// Git in a hostile repository.
//
// The command guard auto-approves literal read-only git commands (status,
// diff, log, show, grep, ls-files, ...). Those commands are read-only only
// in a repository whose configuration is trusted: git runs programs that
// the repository's own config names — core.fsmonitor on every index
// refresh, core.pager and pager.<cmd> on a terminal, diff.external on
// git diff, filter.<driver>.clean/process when it hashes a modified file,
// diff.<driver>.textconv/command for diff, log -p and show, gpg.program
// for %G? formats and log.showSignature, hooks such as post-index-change,
// and so on — and the workspace is exactly the place a hostile repository
// arrives in.
//
// Two layers close that hole:
//
//   - gitSafetyEnv is added to every terminal command's environment. It
//     overrides the program-valued settings through GIT_CONFIG_COUNT /
//     GIT_CONFIG_KEY_<n> / GIT_CONFIG_VALUE_<n>, which git reads at
//     command-line scope, after system, global, repository, worktree and
//     included config; it clears GIT_CONFIG_PARAMETERS (the only
//     environment source that outranks it); and it sets the environment
//     variables git consults before config (GIT_PAGER, GIT_ASKPASS,
//     GIT_PROXY_COMMAND, ...). It also drops system and global config, so
//     only repository config is left to judge. git passes these variables
//     on to the git processes it starts inside submodules.
//   - gitRunsRepoPrograms is the Host-side check for what no override can
//     reach: driver programs selected per path by .gitattributes
//     (filter.<d>.clean|smudge|process, diff.<d>.textconv|command,
//     merge.<d>.driver), diff.external (an empty or harmless replacement
//     makes git diff fail or print something else), include/includeIf
//     (the included file is not checked), git directories reached through
//     a .git file, symlink, commondir or core.worktree that leave the
//     workspace, and the same checks for every populated submodule git
//     would recurse into. It reads files only and never starts git, and it
//     fails closed: whatever it cannot read or parse is a reason.
//
// A git command the guard would allow therefore still asks (rule
// project-code-execution) when gitRunsRepoPrograms gives a reason, and
// runs with gitSafetyEnv either way.

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"unicode"
)

// gitConfigOverrides are set at git's command-line config scope, so they
// win over every config file, include and worktree config. Each value is
// git's own default or a program that does nothing, never a value the
// repository chose.
var gitConfigOverrides = []struct{ key, value string }{
	// Index refreshes (status, diff, ls-files, describe --dirty) would run
	// the fsmonitor hook.
	{"core.fsmonitor", "false"},
	// No hook runs: there is no directory /dev/null/<hook>. This covers
	// .git/hooks too (post-index-change runs on a status that rewrites the
	// index).
	{"core.hooksPath", "/dev/null"},
	// GIT_PAGER below already outranks core.pager and pager.<cmd>.
	{"core.pager", "cat"},
	// The editors exit at once: an empty commit message aborts, a rebase
	// todo stays as git wrote it.
	{"core.editor", "true"},
	{"sequence.editor", "true"},
	// Empty: git asks no askpass program (GIT_ASKPASS below does the same).
	{"core.askPass", ""},
	// git's default transport program instead of the repository's.
	{"core.sshCommand", "ssh"},
	// An empty helper clears the helper list read so far, which at this
	// scope is every helper from every file, URL-specific ones included.
	{"credential.helper", ""},
	// The signature verifiers git uses by default (log --show-signature,
	// log.showSignature, %G? formats).
	{"gpg.program", "gpg"},
	{"gpg.openpgp.program", "gpg"},
	{"gpg.x509.program", "gpgsm"},
	{"gpg.ssh.program", "ssh-keygen"},
	// ext:: URLs run an arbitrary command as the transport.
	{"protocol.ext.allow", "never"},
}

// gitEnvOverrides are environment variables git reads in place of, or
// before, the configuration.
var gitEnvOverrides = []struct{ key, value string }{
	// Only repository config is left: no system file, and no global file
	// (neither ~/.gitconfig nor $XDG_CONFIG_HOME/git/config).
	{"GIT_CONFIG_NOSYSTEM", "1"},
	{"GIT_CONFIG_GLOBAL", "/dev/null"},
	// git reads GIT_CONFIG_PARAMETERS after GIT_CONFIG_COUNT, so an
	// inherited value would outrank the overrides. git -c on the command
	// line still works: git appends to this variable itself.
	{"GIT_CONFIG_PARAMETERS", ""},
	// Outranks core.pager and pager.<cmd>; "cat" means no pager at all.
	{"GIT_PAGER", "cat"},
	// Set but empty: git neither runs core.askPass nor falls back to
	// SSH_ASKPASS, and ssh finds no askpass program either.
	{"GIT_ASKPASS", ""},
	{"SSH_ASKPASS", ""},
	{"GIT_TERMINAL_PROMPT", "0"},
	// Set but empty: git ignores core.gitProxy and connects directly.
	{"GIT_PROXY_COMMAND", ""},
	// status does not rewrite the index, so it cannot trigger the
	// post-index-change hook (core.hooksPath already stops it) or leave a
	// write behind.
	{"GIT_OPTIONAL_LOCKS", "0"},
}

// gitSafetyEnv returns the KEY=VALUE entries added to every terminal
// command so git's config-driven programs are disabled. The entries must
// be applied after the caller's overlay, so they win.
func gitSafetyEnv() []string {
	env := make([]string, 0, 1+2*len(gitConfigOverrides)+len(gitEnvOverrides))
	env = append(env, "GIT_CONFIG_COUNT="+strconv.Itoa(len(gitConfigOverrides)))
	for i, o := range gitConfigOverrides {
		env = append(env,
			"GIT_CONFIG_KEY_"+strconv.Itoa(i)+"="+o.key,
			"GIT_CONFIG_VALUE_"+strconv.Itoa(i)+"="+o.value)
	}
	for _, o := range gitEnvOverrides {
		env = append(env, o.key+"="+o.value)
	}
	return env
}

// Bounds of what the check reads: a config or index larger than this is a
// reason, not a read.
const (
	gitMaxConfigBytes  = 4 << 20
	gitMaxIndexBytes   = 512 << 20
	gitMaxGitfileBytes = 16 << 10 // git's own limit is 4*PATH_MAX
	gitMaxDepth        = 16       // repositories nested through submodules
)

// gitRunsRepoPrograms reports why a git command run in cwd could execute a
// program named by repository configuration that gitSafetyEnv cannot
// neutralise, or "" when there is nothing (or no repository). It finds the
// repository the way git does — walking up from cwd, past the workspace
// root if need be, since git would — and checks its config, config.worktree
// and every populated submodule git would recurse into. It only reads
// files.
func gitRunsRepoPrograms(workspaceRoot, cwd string) (reason string) {
	if workspaceRoot == "" {
		return "the workspace root is unknown, so the repository's git configuration cannot be checked"
	}
	root := gitRealPath(workspaceRoot)
	dir := cwd
	switch {
	case dir == "":
		dir = root
	case !filepath.IsAbs(dir):
		dir = filepath.Join(root, dir)
	}
	a := &gitAudit{root: root, seen: map[string]bool{}}
	return a.discover(gitRealPath(dir))
}

// gitAudit is one run of gitRunsRepoPrograms.
type gitAudit struct {
	root string
	seen map[string]bool // git directories already checked (cycles)
}

// discover walks up from dir like git's setup_git_directory: at each level
// dir/.git (a directory, or a file naming one), then dir itself as a bare
// repository. A candidate git would skip as invalid is still checked, and
// the walk goes on; it stops at the first one that is certainly valid.
func (a *gitAudit) discover(dir string) string {
	for d := dir; ; {
		inside := a.inside(d)
		dotgit := filepath.Join(d, ".git")
		fi, err := os.Stat(dotgit)
		switch {
		case err == nil && fi.IsDir():
			if r := a.repo(dotgit, d, inside, 0); r != "" {
				return r
			}
			if gitDirValid(dotgit) {
				return ""
			}
		case err == nil && fi.Mode().IsRegular():
			// git uses the directory a .git file names, or stops.
			return a.gitfile(dotgit, d, inside, 0)
		case err != nil && !gitAbsent(err) && inside:
			return fmt.Sprintf("cannot inspect %s: %v", a.show(dotgit), errors.Unwrap(err))
		}
		// A .git that is neither file nor directory is skipped, as git does.
		if gitDirLoose(d) {
			if r := a.repo(d, "", inside, 0); r != "" {
				return r
			}
			if gitDirValid(d) {
				return ""
			}
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}

// gitfile follows a .git file ("gitdir: <path>") at path, the .git of
// worktree.
func (a *gitAudit) gitfile(path, worktree string, inside bool, depth int) string {
	data, err := gitReadRegular(path, gitMaxGitfileBytes)
	if err != nil {
		return fmt.Sprintf("cannot read the .git file %s: %v", a.show(path), err)
	}
	target, err := parseGitfile(data)
	if err != nil {
		return fmt.Sprintf("cannot parse the .git file %s: %v", a.show(path), err)
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(filepath.Dir(path), target)
	}
	return a.repo(target, worktree, inside, depth)
}

// parseGitfile returns the path a .git file names, as git's
// read_gitfile_gently reads it.
func parseGitfile(data []byte) (string, error) {
	rest, ok := bytes.CutPrefix(data, []byte("gitdir: "))
	if !ok {
		return "", errors.New(`it does not start with "gitdir: "`)
	}
	rest = bytes.TrimRight(rest, "\r\n")
	if len(rest) == 0 {
		return "", errors.New("it names no path")
	}
	if bytes.IndexByte(rest, 0) >= 0 {
		return "", errors.New("the path holds a NUL byte")
	}
	return filepath.FromSlash(string(rest)), nil
}

// repo checks the git directory gitdir, whose work tree is worktree ("" for
// none known). inside says the .git entry that led here lies in the
// workspace: then every directory git would read must lie there too.
func (a *gitAudit) repo(gitdir, worktree string, inside bool, depth int) string {
	if depth > gitMaxDepth {
		return "submodules nest too deeply to check their git configuration"
	}
	real := gitRealPath(gitdir)
	if a.seen[real] {
		return ""
	}
	a.seen[real] = true
	if inside && !a.inside(real) {
		return fmt.Sprintf("the git directory of %s is outside the workspace (%s)", a.show(worktreeOr(worktree, gitdir)), real)
	}
	common := real
	cdPath := filepath.Join(real, "commondir")
	switch data, err := gitReadRegular(cdPath, gitMaxGitfileBytes); {
	case err == nil:
		cd := strings.TrimRight(string(data), "\r\n")
		if !filepath.IsAbs(cd) {
			cd = filepath.Join(real, cd)
		}
		common = gitRealPath(cd)
		if inside && !a.inside(common) {
			return fmt.Sprintf("the git directory of %s shares a repository outside the workspace (%s)", a.show(worktreeOr(worktree, gitdir)), common)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Sprintf("cannot read %s: %v", a.show(cdPath), err)
	}

	var conf gitRepoSettings
	files := []string{filepath.Join(common, "config"), filepath.Join(real, "config.worktree")}
	if common == real {
		files[1] = filepath.Join(common, "config.worktree")
	}
	for _, f := range files {
		data, err := gitReadRegular(f, gitMaxConfigBytes)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Sprintf("cannot read git config %s: %v", a.show(f), err)
		}
		entries, err := parseGitConfig(data)
		if err != nil {
			return fmt.Sprintf("cannot parse git config %s: %v", a.show(f), err)
		}
		if r := gitConfigReason(entries); r != "" {
			return fmt.Sprintf("git config %s %s", a.show(f), r)
		}
		conf.read(entries)
	}

	// core.bare is not trusted to turn the check of the work tree off.
	wt := worktree
	if conf.worktree != "" {
		p := filepath.FromSlash(conf.worktree)
		if !filepath.IsAbs(p) {
			p = filepath.Join(real, p)
		}
		wt = gitRealPath(p)
		if inside && !a.inside(wt) {
			return fmt.Sprintf("git config of %s sets core.worktree outside the workspace (%s)", a.show(real), wt)
		}
	}
	if wt == "" {
		return ""
	}
	return a.submodules(real, wt, conf.hashLen(), inside, depth)
}

// submodules checks the populated submodules of the index in gitdir: git
// status and git diff run git inside each of them, which reads that
// submodule's own config.
func (a *gitAudit) submodules(gitdir, worktree string, hashLen int, inside bool, depth int) string {
	indexPath := filepath.Join(gitdir, "index")
	data, err := gitReadRegular(indexPath, gitMaxIndexBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	if err != nil {
		return fmt.Sprintf("cannot read the git index %s: %v", a.show(indexPath), err)
	}
	links, shared, err := gitIndexGitlinks(data, hashLen)
	if err != nil {
		return fmt.Sprintf("cannot parse the git index %s: %v", a.show(indexPath), err)
	}
	if shared != "" {
		sharedPath := filepath.Join(gitdir, "sharedindex."+shared)
		data, err := gitReadRegular(sharedPath, gitMaxIndexBytes)
		if err != nil {
			return fmt.Sprintf("cannot read the shared git index %s: %v", a.show(sharedPath), err)
		}
		more, _, err := gitIndexGitlinks(data, hashLen)
		if err != nil {
			return fmt.Sprintf("cannot parse the shared git index %s: %v", a.show(sharedPath), err)
		}
		// Entries the split index replaced or deleted are checked as well.
		links = append(links, more...)
	}
	for _, l := range links {
		if !gitlinkPathOK(l) {
			return fmt.Sprintf("the git index %s names a submodule path that leaves the work tree: %s", a.show(indexPath), gitSanitize(l))
		}
		sub := filepath.Join(worktree, filepath.FromSlash(l))
		dotgit := filepath.Join(sub, ".git")
		fi, err := os.Stat(dotgit)
		subInside := inside || a.inside(sub)
		switch {
		case err != nil && gitAbsent(err):
			continue // not checked out: git does not look inside
		case err != nil:
			return fmt.Sprintf("cannot inspect %s: %v", a.show(dotgit), errors.Unwrap(err))
		case fi.IsDir():
			if r := a.repo(dotgit, sub, subInside, depth+1); r != "" {
				return r
			}
		case fi.Mode().IsRegular():
			if r := a.gitfile(dotgit, sub, subInside, depth+1); r != "" {
				return r
			}
		}
	}
	return ""
}

// gitlinkPathOK: an index path that stays inside the work tree.
func gitlinkPathOK(p string) bool {
	if p == "" || strings.HasPrefix(p, "/") || strings.Contains(p, "\\") || strings.Contains(p, ":") && runtime.GOOS == "windows" {
		return false
	}
	for _, part := range strings.Split(p, "/") {
		if part == "" || part == "." || part == ".." {
			return false
		}
	}
	return true
}

// gitRepoSettings are the repository-format values the check needs.
type gitRepoSettings struct {
	worktree     string // last core.worktree
	objectFormat string
}

func (s *gitRepoSettings) read(entries []gitConfigEntry) {
	for _, e := range entries {
		switch e.Name {
		case "core.worktree":
			s.worktree = e.Value
		case "extensions.objectformat":
			s.objectFormat = e.Value
		}
	}
}

func (s *gitRepoSettings) hashLen() int {
	if strings.EqualFold(s.objectFormat, "sha256") {
		return 32
	}
	return 20
}

// gitConfigReason names the first entry that makes git run a program the
// overrides of gitSafetyEnv cannot replace, or "".
//
// Not reported, because gitSafetyEnv neutralises them at command-line
// scope: core.fsmonitor, core.hooksPath and the hooks directory,
// core.pager and pager.<cmd>, core.editor, sequence.editor, core.askPass,
// core.sshCommand, core.gitProxy, credential.helper (also per URL),
// gpg.*program and protocol.ext.allow. Not reported either, because only
// commands the guard never auto-approves reach them (fetch, push, archive,
// difftool, commit -S): remote.<name>.uploadpack/receivepack,
// tar.<format>.command, difftool/mergetool commands,
// gpg.ssh.defaultKeyCommand, core.alternateRefsCommand. alias.* cannot
// replace a builtin command.
func gitConfigReason(entries []gitConfigEntry) string {
	for _, e := range entries {
		section, sub, key := gitSplitName(e.Name)
		var why string
		switch {
		case section == "include" || section == "includeif":
			why = "includes other config, which is not checked"
		case section == "filter" && (key == "clean" || key == "smudge" || key == "process"):
			why = "names a filter driver program, which git runs on files that .gitattributes assigns to it (status, diff, checkout)"
		case section == "diff" && sub != "" && (key == "textconv" || key == "command"):
			why = "names a diff driver program, which git runs on files that .gitattributes assigns to it (diff, log -p, show)"
		case section == "diff" && sub == "" && key == "external":
			why = "names an external diff program, which git diff runs"
		case section == "merge" && sub != "" && key == "driver":
			why = "names a merge driver program, which git runs on files that .gitattributes assigns to it"
		default:
			continue
		}
		return fmt.Sprintf("sets %s (line %d): it %s", gitSanitize(e.Name), e.Line, why)
	}
	return ""
}

// gitSplitName splits a full variable name as git's parse_config_key does:
// the section up to the first dot, the key after the last dot, the
// subsection between.
func gitSplitName(name string) (section, sub, key string) {
	first := strings.IndexByte(name, '.')
	if first < 0 {
		return "", "", name
	}
	last := strings.LastIndexByte(name, '.')
	section, key = name[:first], name[last+1:]
	if last > first {
		sub = name[first+1 : last]
	}
	return section, sub, key
}

// gitDirValid mirrors git's is_git_directory, but is never looser: a
// directory it accepts is one git accepts, so discovery can stop there.
func gitDirValid(dir string) bool {
	if !gitHeadValid(filepath.Join(dir, "HEAD")) {
		return false
	}
	common := dir
	if data, err := gitReadRegular(filepath.Join(dir, "commondir"), gitMaxGitfileBytes); err == nil {
		cd := strings.TrimRight(string(data), "\r\n")
		if !filepath.IsAbs(cd) {
			cd = filepath.Join(dir, cd)
		}
		common = cd
	} else if !errors.Is(err, fs.ErrNotExist) {
		return false
	}
	return gitSearchableDir(filepath.Join(common, "objects")) && gitSearchableDir(filepath.Join(common, "refs"))
}

// gitDirLoose: dir may be a git directory git accepts (HEAD, objects and
// refs exist), so its config is checked.
func gitDirLoose(dir string) bool {
	for _, n := range []string{"HEAD", "objects", "refs"} {
		if _, err := os.Lstat(filepath.Join(dir, n)); err != nil {
			return false
		}
	}
	return true
}

func gitSearchableDir(p string) bool {
	fi, err := os.Stat(p)
	if err != nil || !fi.IsDir() {
		return false
	}
	return runtime.GOOS == "windows" || fi.Mode().Perm()&0o100 != 0
}

// gitHeadValid mirrors git's validate_headref.
func gitHeadValid(path string) bool {
	fi, err := os.Lstat(path)
	if err != nil {
		return false
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		target, err := os.Readlink(path)
		return err == nil && strings.HasPrefix(target, "refs/")
	}
	if !fi.Mode().IsRegular() {
		return false
	}
	data, err := gitReadRegular(path, 1<<20)
	if err != nil {
		return false
	}
	if len(data) > 255 {
		data = data[:255]
	}
	if rest, ok := bytes.CutPrefix(data, []byte("ref:")); ok {
		rest = bytes.TrimLeft(rest, " \t\n\r")
		if bytes.HasPrefix(rest, []byte("refs/")) {
			return true
		}
	}
	if len(data) < 40 {
		return false
	}
	_, err = hex.DecodeString(string(data[:40]))
	return err == nil
}

// gitReadRegular reads a regular file (following symlinks) of at most max
// bytes. Anything else — a FIFO that would block, a device, a directory —
// is an error. The open does not block even if a FIFO replaced the file
// after the first look.
func gitReadRegular(path string, max int64) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("larger than %d bytes", max)
	}
	return data, nil
}

// gitAbsent: the stat error says the path cannot exist, so git, too, finds
// nothing there.
func gitAbsent(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.ENAMETOOLONG)
}

// gitRealPath is the absolute, symlink-free form of p as far as it exists.
func gitRealPath(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		abs = filepath.Clean(p)
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		return r
	}
	return abs
}

func (a *gitAudit) inside(p string) bool {
	rel, err := filepath.Rel(a.root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// show names p for a reason: relative to the workspace when inside it.
func (a *gitAudit) show(p string) string {
	real := gitRealPath(p)
	if a.inside(real) {
		if rel, err := filepath.Rel(a.root, real); err == nil {
			return gitSanitize(filepath.ToSlash(rel))
		}
	}
	return gitSanitize(real)
}

func worktreeOr(worktree, gitdir string) string {
	if worktree != "" {
		return worktree
	}
	return gitdir
}

// gitSanitize makes repository-chosen text safe to show in a prompt: no
// control characters, bounded length.
func gitSanitize(s string) string {
	const max = 120
	var b strings.Builder
	n := 0
	for _, r := range s {
		if n == max {
			b.WriteString("…")
			break
		}
		if !unicode.IsPrint(r) {
			r = '?'
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}
