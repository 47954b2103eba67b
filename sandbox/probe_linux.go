package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// staticMissing lists the kernel features the sandbox needs that this
// machine visibly lacks, without starting anything.
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
	if abi := landlockABI(); abi < minLandlockABI {
		missing = append(missing, fmt.Sprintf("Landlock ABI %d or newer (found %d)", minLandlockABI, abi))
	}
	return missing
}

// landlockABI is the kernel's Landlock ABI version, 0 without Landlock.
func landlockABI() int {
	abi, err := llsys.LandlockGetABIVersion()
	if err != nil {
		return 0
	}
	return abi
}

// probeHelper builds a sandbox with p and no command: one helper process
// that stops after the setup.
func probeHelper(p Policy) error {
	cmd := &exec.Cmd{SysProcAttr: &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}}
	l, err := Wrap(cmd, p)
	if err != nil {
		return err
	}
	l.cfg.Path = ""
	if err := cmd.Start(); err != nil {
		l.Abort()
		return &StartError{Reason: err.Error()}
	}
	err = l.Started()
	_ = cmd.Wait()
	l.Release()
	return err
}

func readInt(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}
