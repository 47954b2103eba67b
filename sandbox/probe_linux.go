package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

var staticOnce struct {
	sync.Once
	missing string
}

// missingFeature is the cheap check made before every start: a feature
// whose absence the helper would only discover after the namespaces were
// made. "" when nothing is missing.
func missingFeature(p Policy) string {
	if p.simulateMissing != "" {
		return p.simulateMissing
	}
	staticOnce.Do(func() {
		if m := staticMissing(); len(m) > 0 {
			staticOnce.missing = m[0]
		}
	})
	return staticOnce.missing
}

func staticMissing() []string {
	var missing []string
	if _, err := os.Stat("/proc/self/exe"); err != nil {
		missing = append(missing, "/proc/self/exe (the helper re-executes the Host binary)")
	}
	if n, err := readInt("/proc/sys/user/max_user_namespaces"); err == nil && n == 0 {
		missing = append(missing, "user namespaces (user.max_user_namespaces is 0)")
	}
	if os.Getuid() != 0 {
		if n, err := readInt("/proc/sys/kernel/unprivileged_userns_clone"); err == nil && n == 0 {
			missing = append(missing, "unprivileged user namespaces (kernel.unprivileged_userns_clone is 0)")
		}
		if n, err := readInt("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"); err == nil && n == 1 {
			missing = append(missing, "unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns is 1)")
		}
	}
	if _, err := os.Stat("/proc/self/ns/pid"); err != nil {
		missing = append(missing, "PID namespaces")
	}
	if abi, err := llsys.LandlockGetABIVersion(); err != nil || abi < minLandlockABI {
		missing = append(missing, fmt.Sprintf("Landlock ABI %d or newer (found %d)", minLandlockABI, max(abi, 0)))
	}
	return missing
}

// Probe builds a sandbox with p and no command, and reports what works
// and what is missing. It starts one helper process.
func Probe(s Settings, p Policy) Report {
	r := Report{Mode: s.Mode, Network: "on"}
	if r.Mode == "" {
		r.Mode = ModeWorkspaceWrite
	}
	if s.NoNetwork {
		r.Network = "off"
	}
	if abi, err := llsys.LandlockGetABIVersion(); err == nil {
		r.Landlock = abi
	}
	r.Missing = staticMissing()
	if p.simulateMissing != "" {
		r.Missing = append(r.Missing, p.simulateMissing)
	}
	if len(r.Missing) > 0 {
		r.Error = Unavailable(r.Missing[0]).Error()
		return r
	}
	cmd := &exec.Cmd{SysProcAttr: &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}}
	l, err := Wrap(cmd, p)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	l.cfg.Path = "" // the helper stops after the setup
	if err := cmd.Start(); err != nil {
		l.Abort()
		r.Error = "sandbox failed to start: " + err.Error()
		return r
	}
	err = l.Started()
	_ = cmd.Wait()
	l.Exit()
	if err != nil {
		r.Error = err.Error()
		return r
	}
	r.Working = true
	return r
}

func readInt(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}
