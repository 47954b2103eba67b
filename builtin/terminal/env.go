package terminal

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/demiurge/demiurge/builtin/internal/tool"
	"github.com/demiurge/demiurge/effect"
)

// envNamePattern is the shape of every environment name a terminal call
// may set: overlay keys, secret binding sources and targets.
var envNamePattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

// hostEnvAllowlist are the only Host environment variables a command
// inherits, compared case-insensitively. Every
// provider, channel, MCP or cloud credential is therefore absent: nothing
// that is not named here reaches a command unless the call's approved
// overlay or secret bindings put it there.
var hostEnvAllowlist = map[string]bool{
	"PATH": true, "LANG": true, "LC_ALL": true, "LC_CTYPE": true, "TERM": true, "COLORTERM": true,
	"TMPDIR": true, "TMP": true, "TEMP": true, "TZ": true,
	"SYSTEMROOT": true, "SYSTEMDRIVE": true, "COMSPEC": true, "PATHEXT": true, "WINDIR": true,
}

// privateTmpNames are the temporary-directory variables pointed into the
// command's private home, so scratch files of one session never land in a
// directory another session or user reads.
var privateTmpNames = []string{"TMPDIR", "TMP", "TEMP"}

// hostOnlyEnv are names removed after the overlay: Host configuration a
// command must not see or steer.
var hostOnlyEnv = []string{"DEMIURGE_TIMEZONE"}

// parseEnvOverlay validates the env argument (step 4): an object whose keys are environment names. Values are stringified.
// A missing or null env is no overlay.
func parseEnvOverlay(m map[string]any) (map[string]string, *effect.Outcome) {
	if m == nil {
		return nil, nil
	}
	overlay := make(map[string]string, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !envNamePattern().MatchString(k) {
			out := tool.Invalid("invalid terminal environment name: %s", k)
			return nil, &out
		}
		overlay[k] = envString(m[k])
	}
	return overlay, nil
}

// envString stringifies one overlay value the way JSON shows it, so 3
// becomes "3" and true "true" (not "3.0" or "True").
func envString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool, float64:
		return fmt.Sprint(x)
	default:
		if s, err := tool.JSONText(x); err == nil {
			return s
		}
		return fmt.Sprint(x)
	}
}

// commandEnv builds a command's environment: the
// allowlisted Host variables from hostEnv (KEY=VALUE form, first of each
// case-insensitive name wins, empty values skipped, PATH normalised), HOME
// and the temporary directories in the private home, then the overlay,
// minus the Host-only names, then the bound secrets. The result is sorted
// KEY=VALUE pairs.
func commandEnv(hostEnv []string, home, tmp string, overlay, bound map[string]string) []string {
	env := map[string]string{}
	seen := map[string]bool{}
	for _, kv := range hostEnv {
		k, v, ok := strings.Cut(kv, "=")
		upper := strings.ToUpper(k)
		if !ok || v == "" || !hostEnvAllowlist[upper] || seen[upper] {
			continue
		}
		seen[upper] = true
		if upper == "PATH" {
			k = "PATH"
		}
		env[k] = v
	}
	for _, name := range privateTmpNames {
		deleteFold(env, name)
		env[name] = tmp
	}
	env["HOME"] = home
	if runtime.GOOS == "windows" {
		env["USERPROFILE"] = home
	}
	for k, v := range overlay {
		env[k] = v
	}
	for _, name := range hostOnlyEnv {
		deleteFold(env, name)
	}
	for k, v := range bound {
		env[k] = v
	}
	// Last, so no overlay undoes them: git's config-driven programs off.
	for _, kv := range gitSafetyEnv() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	out := make([]string, 0, len(env))
	for _, k := range slices.Sorted(maps.Keys(env)) {
		out = append(out, k+"="+env[k])
	}
	return out
}

// envKeys returns the sorted names of a KEY=VALUE list: the audit view of
// an environment, which never holds a value.
func envKeys(env []string) []string {
	keys := make([]string, 0, len(env))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// envLookup returns the value of name in a KEY=VALUE list.
func envLookup(env []string, name string) string {
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return v
		}
	}
	return ""
}

// deleteFold removes every key of m equal to name ignoring case.
func deleteFold(m map[string]string, name string) {
	for k := range m {
		if strings.EqualFold(k, name) {
			delete(m, k)
		}
	}
}

// commandExecutable is the audit's best guess at what a command line runs: its
// first word that is not a VAR=value
// assignment, resolved against the command's PATH (or, when it names a
// path, against cwd); the shell when there is no such word or it cannot be
// found. It is information for the operator, not a security decision: the
// command guard and the approval decide.
func commandExecutable(command, cwd, pathList, shell string) string {
	for _, word := range strings.Fields(command) {
		word = strings.Trim(word, `"'`)
		if word == "" || isAssignment(word) {
			continue
		}
		if strings.ContainsRune(word, '/') {
			if !filepath.IsAbs(word) {
				word = filepath.Join(cwd, word)
			}
			if isExecutableFile(word) {
				return word
			}
			return shell
		}
		if p := lookPathIn(word, pathList); p != "" {
			return p
		}
		return shell
	}
	return shell
}

// isAssignment reports whether word has the shape NAME=value.
func isAssignment(word string) bool {
	name, _, ok := strings.Cut(word, "=")
	return ok && envNamePattern().MatchString(name)
}

// lookPathIn is exec.LookPath over an explicit PATH: the first absolute
// directory holding an executable regular file called name.
func lookPathIn(name, pathList string) string {
	for _, dir := range filepath.SplitList(pathList) {
		if !filepath.IsAbs(dir) {
			continue // a relative PATH entry names no fixed file
		}
		if p := filepath.Join(dir, name); isExecutableFile(p) {
			return p
		}
	}
	return ""
}

func isExecutableFile(p string) bool {
	info, err := os.Stat(p)
	return err == nil && info.Mode().IsRegular() && info.Mode().Perm()&0o111 != 0
}

// AllowlistedEnv returns the Host variables a child process may inherit
// (the terminal's allowlist), in KEY=VALUE form:
// nothing else of hostEnv, no HOME and no temporary directories (the
// caller sets its own). MCP stdio servers start from it.
func AllowlistedEnv(hostEnv []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, kv := range hostEnv {
		k, v, ok := strings.Cut(kv, "=")
		upper := strings.ToUpper(k)
		if !ok || v == "" || !hostEnvAllowlist[upper] || seen[upper] || upper == "HOME" {
			continue
		}
		seen[upper] = true
		if upper == "PATH" {
			k = "PATH"
		}
		out = append(out, k+"="+v)
	}
	return out
}
