package sandbox

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Mode is the operator's sandbox.mode.
type Mode string

// Modes.
const (
	// ModeWorkspaceWrite confines every agent process (the default).
	ModeWorkspaceWrite Mode = "workspace-write"
	// ModeOff runs agent processes without the OS sandbox.
	ModeOff Mode = "off"
)

// Settings are the operator's sandbox settings (config.yaml `sandbox:`).
// The zero value is the default: workspace-write with network.
type Settings struct {
	Mode Mode
	// NoNetwork is sandbox.network: off.
	NoNetwork bool
}

// Enabled reports whether processes run sandboxed.
func (s Settings) Enabled() bool { return s.Mode != ModeOff }

// ParseMode reads sandbox.mode ("" is the default).
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case "", ModeWorkspaceWrite:
		return ModeWorkspaceWrite, nil
	case ModeOff:
		return ModeOff, nil
	}
	return "", fmt.Errorf("sandbox.mode must be workspace-write or off, not %q", s)
}

// ParseNetwork reads sandbox.network: on/off (true/false also accepted, as
// YAML 1.1 readers spell them). It reports whether the network is off.
func ParseNetwork(s string) (off bool, err error) {
	switch strings.ToLower(s) {
	case "", "on", "true":
		return false, nil
	case "off", "false":
		return true, nil
	}
	return false, fmt.Errorf("sandbox.network must be on or off, not %q", s)
}

// Profile is what the Host knows for every sandboxed start: the operator's
// settings and the paths no agent process may see. The composition root
// fills it once; callers add the writable directories of each start.
type Profile struct {
	Settings Settings
	// Hidden are absolute paths hidden from every sandboxed process, on top
	// of DefaultHidden (the runtime home, the root of the private homes).
	Hidden []string
	// UserHome is the Host user's home, whose credential entries
	// (CredentialNames) are hidden; "" uses $HOME.
	UserHome string
	// SimulateMissing names a kernel feature to report as missing (for
	// tests of the refusal path; it can only make the sandbox refuse).
	SimulateMissing string
}

// CredentialNames are the entries of the Host user's home that hold
// credentials or tokens; they are hidden from every sandboxed process.
var CredentialNames = []string{
	".ssh", ".aws", ".azure", ".config", ".gnupg", ".docker", ".kube",
	".netrc", ".git-credentials", ".gitconfig", ".npmrc", ".pypirc", ".pgpass",
	".my.cnf", ".password-store", ".local/share/keyrings", ".terraform.d",
	".vault-token", ".bash_history", ".zsh_history", ".python_history",
	".psql_history", ".mysql_history", ".lesshst", ".viminfo", ".cargo/credentials",
	".cargo/credentials.toml", ".gem/credentials", ".m2/settings.xml", ".gradle/gradle.properties",
	".demiurge",
}

// systemHidden are the per-user runtime directories (session buses,
// keyrings, agent sockets) and the sockets of container engines, each a
// way to act as the Host's user outside the sandbox. Shared scratch such
// as /tmp stays readable (it holds tools and test fixtures) but, like
// every path outside the writable directories, read-only.
var systemHidden = []string{
	"/run/user", "/run/docker.sock", "/var/run/docker.sock", "/run/containerd",
	"/run/podman", "/run/dbus", "/var/run/dbus", "/run/snapd.socket",
}

// Policy returns the policy of one start whose writable directories are
// writable (the workspace, the private HOME and TMPDIR).
func (p Profile) Policy(writable ...string) Policy {
	home := cmp.Or(p.UserHome, os.Getenv("HOME"))
	hidden := append([]string(nil), systemHidden...)
	if filepath.IsAbs(home) && home != "/" {
		for _, n := range CredentialNames {
			hidden = append(hidden, filepath.Join(home, n))
		}
	}
	hidden = append(hidden, p.Hidden...)
	if p.Settings.NoNetwork {
		// Local services listen on Unix sockets there too.
		hidden = append(hidden, "/run", "/var/run")
	}
	return Policy{
		Writable:        writable,
		Hidden:          hidden,
		Network:         !p.Settings.NoNetwork,
		simulateMissing: p.SimulateMissing,
	}
}

// Policy is what one sandboxed process may see and do.
type Policy struct {
	// Writable are absolute directories the process may write beneath;
	// they stay visible even inside a hidden path.
	Writable []string
	// Hidden are absolute paths the process cannot see. A path that does
	// not exist is ignored.
	Hidden []string
	// Network false gives the process a network namespace of its own,
	// with no interface up.
	Network bool
	// NoProcesses forbids the command to create processes: a seccomp
	// filter makes fork, vfork and clone of anything but a thread fail
	// with EPERM (clone3 with ENOSYS), and refuses ptrace. For programs
	// that must never start another one (the Python worker), whatever
	// uid the Host runs as: RLIMIT_NPROC does not bind root. Linux on
	// amd64 and arm64; elsewhere such a start is refused.
	NoProcesses bool

	simulateMissing string
}

// mountOp is one step of the mount plan, applied in order.
type mountOp struct {
	Path string `json:"path"`
	// Kind is "hide" (tmpfs over a directory, /dev/null over a file) or
	// "bind" (a writable directory bound back).
	Kind string `json:"kind"`
	File bool   `json:"file,omitempty"`
}

// plan resolves the policy into mount steps, outermost first, so that a
// writable directory inside a hidden one is bound after the hiding tmpfs,
// and a hidden path inside a writable one is hidden after the bind. Paths
// are resolved through symbolic links (mounts follow them anyway); missing
// hidden paths are dropped.
func (p Policy) plan() ([]mountOp, error) {
	var ops []mountOp
	seen := map[string]bool{}
	for _, w := range p.Writable {
		if !filepath.IsAbs(w) {
			return nil, fmt.Errorf("writable path is not absolute: %s", w)
		}
		r, err := filepath.EvalSymlinks(w)
		if err != nil {
			return nil, fmt.Errorf("writable path %s: %w", w, err)
		}
		if info, err := os.Stat(r); err != nil || !info.IsDir() {
			return nil, fmt.Errorf("writable path is not a directory: %s", w)
		}
		if !seen["bind:"+r] {
			seen["bind:"+r] = true
			ops = append(ops, mountOp{Path: r, Kind: "bind"})
		}
	}
	for _, h := range p.Hidden {
		if !filepath.IsAbs(h) {
			return nil, fmt.Errorf("hidden path is not absolute: %s", h)
		}
		r, err := filepath.EvalSymlinks(h)
		if err != nil {
			continue // nothing there to hide
		}
		info, err := os.Stat(r)
		if err != nil || r == "/" {
			continue
		}
		if !seen["hide:"+r] {
			seen["hide:"+r] = true
			ops = append(ops, mountOp{Path: r, Kind: "hide", File: !info.IsDir()})
		}
	}
	sort.SliceStable(ops, func(i, j int) bool {
		di, dj := depth(ops[i].Path), depth(ops[j].Path)
		if di != dj {
			return di < dj
		}
		// The same path hidden and writable: the bind wins.
		return ops[i].Kind == "hide" && ops[j].Kind == "bind"
	})
	return ops, nil
}

func depth(p string) int {
	if p == "/" {
		return 0
	}
	return strings.Count(filepath.Clean(p), "/")
}

// Check reports, without starting anything, a kernel feature the sandbox
// needs and this machine lacks; nil when the sandbox is off or nothing is
// known to be missing (the helper's own setup may still fail, and says
// why).
func (p Profile) Check() error {
	if !p.Settings.Enabled() {
		return nil
	}
	if m := missingFeature(p.SimulateMissing); m != "" {
		return Unavailable(m)
	}
	return nil
}

// Describe says in words how processes run, for approval questions and
// audit views.
func (s Settings) Describe() string {
	if !s.Enabled() {
		return "runs without the OS sandbox (sandbox.mode: off)"
	}
	_, net := s.names()
	return "runs sandboxed (workspace-write, network " + net + "): it can write only in the workspace and its private HOME and TMPDIR, and cannot see the Host, the runtime home or credentials"
}

// View is the audit form of the settings.
func (s Settings) View() map[string]any {
	mode, net := s.names()
	return map[string]any{"mode": string(mode), "network": net, "sandboxed": s.Enabled()}
}

// names are the settings as config.yaml spells them.
func (s Settings) names() (mode Mode, network string) {
	mode, network = ModeWorkspaceWrite, "on"
	if !s.Enabled() {
		mode = ModeOff
	}
	if s.NoNetwork {
		network = "off"
	}
	return mode, network
}
