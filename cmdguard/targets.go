package cmdguard

import (
	"path"
	"regexp"
	"strings"
	"sync"
)

// systemDirs are the top-level directories whose recursive deletion or
// permission change wrecks the machine. The spec lists home root etc usr var bin
// sbin boot lib; the rest are their siblings on Linux and macOS.
var systemDirs = map[string]bool{
	"home": true, "root": true, "etc": true, "usr": true, "var": true, "bin": true,
	"sbin": true, "boot": true, "lib": true, "lib32": true, "lib64": true, "opt": true,
	"srv": true, "dev": true, "proc": true, "sys": true, "run": true, "mnt": true,
	"media": true, "snap": true, "System": true, "Users": true, "Library": true,
	"Applications": true, "private": true,
}

// homeMark stands for the user's home directory in a cleaned path.
const homeMark = "/\x00home"

var tildeUserRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^~[A-Za-z_][A-Za-z0-9_.-]*`) })

// criticalTarget reports whether a path names the root, a system
// directory, a home directory, or everything directly inside one of them
// ("/", "/*", "/etc", "/usr/*", "~", "~/*", "$HOME", "${HOME}/"), however it
// is spelled ("//", "/./", "/usr/..", "~/..", a glob standing for a
// top-level name).
func criticalTarget(t string) bool {
	switch {
	case t == "~" || strings.HasPrefix(t, "~/"):
		t = homeMark + t[1:]
	case tildeUserRe().MatchString(t):
		t = homeMark + t[len(tildeUserRe().FindString(t)):]
	case t == "$HOME" || strings.HasPrefix(t, "$HOME/"):
		t = homeMark + t[len("$HOME"):]
	case t == "${HOME}" || strings.HasPrefix(t, "${HOME}/"):
		t = homeMark + t[len("${HOME}"):]
	}
	if !strings.HasPrefix(t, "/") {
		return false
	}
	c := path.Clean(t)
	if c == "/" {
		return true
	}
	comps := strings.Split(c[1:], "/")
	if comps[0] == homeMark[1:] {
		return len(comps) == 1 || (len(comps) == 2 && broadGlob(comps[1]))
	}
	top := systemDirs[comps[0]] || hasGlob(comps[0])
	switch len(comps) {
	case 1:
		return top
	case 2:
		return top && broadGlob(comps[1])
	}
	return false
}

func hasGlob(s string) bool { return strings.ContainsAny(s, "*?[") }

// broadGlob reports a component that matches every name: "*", "**", ".*",
// "?*", ...
func broadGlob(s string) bool {
	return strings.ContainsAny(s, "*") && strings.Trim(s, "*?.") == ""
}

// cleanPath cleans an absolute path ("//dev/./sda" -> "/dev/sda").
func cleanPath(p string) string {
	if strings.HasPrefix(p, "/") {
		return path.Clean(p)
	}
	return p
}

// rmTargetsCritical: rm with any dash argument containing r or R (the
// spec's rule, which also counts --no-preserve-root) and a critical target.
// Every argument after "--" is a target.
func rmTargetsCritical(args []string) bool {
	recursive := false
	var targets []string
	for i, arg := range args {
		if arg == "--" {
			targets = append(targets, args[i+1:]...)
			break
		}
		if strings.HasPrefix(arg, "-") && arg != "-" {
			if strings.ContainsAny(arg, "rR") {
				recursive = true
			}
			continue
		}
		targets = append(targets, arg)
	}
	if !recursive {
		return false
	}
	for _, t := range targets {
		if criticalTarget(t) {
			return true
		}
	}
	return false
}

// findDeletesCritical: find starting at a critical path with -delete or
// -exec(dir) rm.
func findDeletesCritical(args []string) bool {
	critical := false
	for _, arg := range args {
		if strings.HasPrefix(arg, "-") || arg == "(" || arg == "!" {
			break
		}
		if criticalTarget(arg) {
			critical = true
		}
	}
	return critical && findDeletes(args)
}

// permissionTargetsCritical: chmod/chown/chgrp -R (or --recursive) on a
// critical path.
func permissionTargetsCritical(args []string) bool {
	recursive := false
	var operands []string
	for i, arg := range args {
		if arg == "--" {
			operands = append(operands, args[i+1:]...)
			break
		}
		switch {
		case isLong(arg, "--recursive"):
			recursive = true
		case strings.HasPrefix(arg, "--"):
		case strings.HasPrefix(arg, "-") && len(arg) > 1:
			if strings.Contains(arg, "R") {
				recursive = true
			}
		default:
			operands = append(operands, arg)
		}
	}
	if !recursive {
		return false
	}
	for _, o := range operands {
		if criticalTarget(o) {
			return true
		}
	}
	return false
}

func ddWritesRawDevice(args []string) bool {
	for _, arg := range args {
		if strings.HasPrefix(arg, "of=") && rawDeviceRe().MatchString(cleanPath(arg[3:])) {
			return true
		}
	}
	return false
}

// copySpec: the value-taking options of cp, mv and install.
var copySpec = optSpec{short: "tSgmo", long: []string{"--target-directory", "--suffix", "--group", "--mode", "--owner", "--backup", "--reflink", "--sparse", "--preserve", "--no-preserve"}}

// writesRawDevice: tee, shred, wipefs, blkdiscard, sgdisk or sfdisk naming
// a raw block device anywhere, or cp/mv/install copying onto one.
func writesRawDevice(name string, args []string) bool {
	var targets []string
	switch name {
	case "tee", "shred", "wipefs", "blkdiscard", "sgdisk", "sfdisk":
		_, targets = parseOpts(args, optSpec{})
	case "cp", "mv", "install":
		opts, operands := parseOpts(args, copySpec)
		targets = values(opts, "-t", "--target-directory")
		if len(operands) > 0 {
			targets = append(targets, operands[len(operands)-1])
		}
	}
	for _, o := range targets {
		if rawDeviceRe().MatchString(cleanPath(o)) {
			return true
		}
	}
	return false
}

var (
	pkillSpec = optSpec{short: "gGPstuUF", long: []string{"--signal", "--pgroup", "--group", "--parent",
		"--session", "--terminal", "--euid", "--uid", "--pidfile", "--ns", "--nslist"}}
	killallSpec = optSpec{short: "suoynZ", long: []string{"--signal", "--user", "--older-than",
		"--younger-than", "--ns", "--context"}}
)

// killsEverything: pkill or killall matching every process name, or
// killing every process of a user.
func killsEverything(name string, args []string) bool {
	var opts []opt
	var patterns []string
	switch name {
	case "pkill":
		opts, patterns = parseOpts(args, pkillSpec)
	case "killall":
		opts, patterns = parseOpts(args, killallSpec)
	default:
		return false
	}
	if len(patterns) == 0 {
		return has(opts, "-u", "-U", "--uid", "--euid", "--user")
	}
	if name == "killall" && !has(opts, "-r", "--regexp") {
		return false
	}
	for _, p := range patterns {
		if matchesAll(p) {
			return true
		}
	}
	return false
}

// matchesAll reports a regular expression that matches every name.
func matchesAll(p string) bool {
	p = strings.TrimSuffix(strings.TrimPrefix(p, "^"), "$")
	switch p {
	case "", ".", ".*", ".+", "..*", ".?", "(.*)":
		return true
	}
	return false
}

// findDeletes: find -delete, or -exec/-execdir running rm.
func findDeletes(args []string) bool {
	for i, arg := range args {
		if arg == "-delete" {
			return true
		}
		if (arg == "-exec" || arg == "-execdir") && i+1 < len(args) && baseName(args[i+1]) == "rm" {
			return true
		}
	}
	return false
}
