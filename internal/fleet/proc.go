package fleet

import (
	"bufio"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Proc is a fleet Host child as its parent sees it.
type Proc struct {
	HostID string

	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan string // the child's stdout, a line each; closed at its end
}

// Start starts cmd (its executable, arguments, environment and stderr set
// by the caller; Start takes its stdin and stdout) and waits up to within
// for its ready line.
func Start(cmd *exec.Cmd, within time.Duration) (*Proc, error) {
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Proc{cmd: cmd, in: in, lines: make(chan string, 16)}
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
	}()
	line, err := p.expect("ready ", within)
	if err != nil {
		p.Kill()
		return nil, err
	}
	p.HostID = strings.TrimPrefix(line, "ready ")
	return p, nil
}

// expect reads lines until one starts with prefix, the child ends, or
// within passes.
func (p *Proc) expect(prefix string, within time.Duration) (string, error) {
	timer := time.NewTimer(within)
	defer timer.Stop()
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				return "", fmt.Errorf("fleet host %s ended before %q", p.HostID, strings.TrimSpace(prefix))
			}
			if strings.HasPrefix(line, prefix) {
				return line, nil
			}
		case <-timer.C:
			return "", fmt.Errorf("fleet host %s: no %q within %s", p.HostID, strings.TrimSpace(prefix), within)
		}
	}
}

// Enqueue has the child queue n tasks for any Host (each holding holdMS
// milliseconds, 0 for none) and waits until it has.
func (p *Proc) Enqueue(n, holdMS int, within time.Duration) error {
	if _, err := fmt.Fprintf(p.in, "enqueue %d %d\n", n, holdMS); err != nil {
		return err
	}
	_, err := p.expect("enqueued "+strconv.Itoa(n), within)
	return err
}

// Kill ends the child with SIGKILL, as a crash would, and reaps it.
func (p *Proc) Kill() error {
	p.cmd.Process.Signal(syscall.SIGKILL)
	return p.wait()
}

// Stop ends the child's input, so it closes its Host and exits, and waits
// up to within before killing it.
func (p *Proc) Stop(within time.Duration) error {
	p.in.Close()
	exited := make(chan error, 1)
	go func() { exited <- p.wait() }()
	select {
	case err := <-exited:
		return err
	case <-time.After(within):
		p.cmd.Process.Signal(syscall.SIGKILL)
		<-exited
		return fmt.Errorf("fleet host %s did not stop within %s", p.HostID, within)
	}
}

// wait reaps the child after draining its output: Wait closes the pipe,
// so the reader must have reached its end first.
func (p *Proc) wait() error {
	for range p.lines {
	}
	return p.cmd.Wait()
}
