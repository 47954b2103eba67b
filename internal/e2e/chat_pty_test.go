//go:build linux

package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// ptyChat is the binary running under a real pseudo-terminal: stdin,
// stdout and stderr are the terminal, as for an operator at a shell.
type ptyChat struct {
	t      *testing.T
	master *os.File
	cmd    *exec.Cmd
	read   chan struct{} // closed when the terminal's output ends

	mu   sync.Mutex // guards out, seen
	out  bytes.Buffer
	seen int // output before this offset was matched by an earlier expect
}

func startPTY(t *testing.T, e *env, args ...string) *ptyChat {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock pty: %v", err)
	}
	n, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("pty number: %v", err)
	}
	slave, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open pty: %v", err)
	}
	_ = unix.IoctlSetWinsize(int(slave.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 50, Col: 200})
	cmd := exec.Command(demiurgeBinary(t), args...)
	cmd.Env, cmd.Dir = e.environ(), e.workspace
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	// A session of its own with the terminal as its controlling terminal.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	p := &ptyChat{t: t, master: master, cmd: cmd, read: make(chan struct{})}
	go func() {
		defer close(p.read)
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			p.mu.Lock()
			p.out.Write(buf[:n])
			p.mu.Unlock()
			if err != nil { // EIO once the child and its terminal are gone
				return
			}
		}
	}()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			p.cmd.Process.Kill()
			p.cmd.Wait()
		}
		master.Close()
		<-p.read
	})
	return p
}

// expect waits until want appears in the output after what earlier
// expects matched, and returns the output up to and including it.
func (p *ptyChat) expect(want string) string {
	p.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		p.mu.Lock()
		all := p.out.String()
		rest := all[p.seen:]
		if i := strings.Index(rest, want); i >= 0 {
			p.seen += i + len(want)
			p.mu.Unlock()
			return rest[:i+len(want)]
		}
		p.mu.Unlock()
		if time.Now().After(deadline) {
			p.t.Fatalf("timed out waiting for %q; terminal shows:\n%s", want, all)
		}
		select {
		case <-p.read:
			p.mu.Lock()
			done := p.out.String()
			p.mu.Unlock()
			if !strings.Contains(done[p.seen:], want) {
				p.t.Fatalf("terminal closed without %q; it showed:\n%s", want, done)
			}
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// typeLine types s and Enter.
func (p *ptyChat) typeLine(s string) {
	p.t.Helper()
	if _, err := io.WriteString(p.master, s+"\r"); err != nil {
		p.t.Fatal(err)
	}
}

// wait waits for the process to exit and returns its exit code.
func (p *ptyChat) wait() int {
	p.t.Helper()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			p.t.Fatal(err)
		}
		return 0
	case <-time.After(30 * time.Second):
		p.mu.Lock()
		defer p.mu.Unlock()
		p.t.Fatalf("chat did not exit; terminal shows:\n%s", p.out.String())
		return -1
	}
}

func writeScript(e *env, path, content, reply string) string {
	return e.writeFile("pty-script.json", `[{"tool_calls":[{"id":"call_w","name":"write_file","arguments":{"path":"`+path+`","content":"`+content+`"}}]},{"content":"`+reply+`"}]`)
}

// On a terminal, chat asks every approval without a flag: the question
// shows, "y" allows the write once, the call's line shows its status, and
// the reply follows. The next request of the same kind is asked again
// (allow once is not a session grant), and "a" then allows it for the
// session: a third write is not asked.
func TestChatPTYAllowOnce(t *testing.T) {
	e := newEnv(t)
	script := e.writeFile("pty-script.json", `[`+
		`{"tool_calls":[{"id":"c1","name":"write_file","arguments":{"path":"notes.txt","content":"hello pty"}}]},{"content":"wrote it"},`+
		`{"tool_calls":[{"id":"c2","name":"write_file","arguments":{"path":"notes.txt","content":"again"}}]},{"content":"wrote again"},`+
		`{"tool_calls":[{"id":"c3","name":"write_file","arguments":{"path":"notes.txt","content":"third"}}]},{"content":"wrote third"}]`)
	p := startPTY(t, e, "chat", "--line", "--fake-script", script)
	p.expect("> ")
	p.typeLine("please write the note")
	q := p.expect("[y] allow once  [a] allow for this session  [n] deny")
	if !strings.Contains(q, "Approval needed") || !strings.Contains(q, "notes.txt") {
		t.Fatalf("question does not say what is asked:\n%s", q)
	}
	p.typeLine("y")
	p.expect("(allowed once)")
	p.expect(`· write_file {content: "hello pty", path: "notes.txt"} … ok`)
	p.expect("wrote it")
	if b, err := os.ReadFile(filepath.Join(e.workspace, "notes.txt")); err != nil || string(b) != "hello pty" {
		t.Fatalf("the approved write: %q, %v", b, err)
	}

	p.expect("> ")
	p.typeLine("once more")
	p.expect("[y] allow once")
	p.typeLine("a")
	p.expect("(allowed for this session)")
	p.expect(`· write_file {content: "again", path: "notes.txt"} … ok`)
	p.expect("wrote again")

	p.expect("> ")
	p.typeLine("and a third time")
	third := p.expect("wrote third")
	if strings.Contains(third, "Approval needed") {
		t.Fatalf("a session grant was asked again:\n%s", third)
	}
	if !strings.Contains(third, `· write_file {content: "third", path: "notes.txt"} … ok`) {
		t.Fatalf("no tool line for the granted call:\n%s", third)
	}
	p.expect("> ")
	p.typeLine("/exit")
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// "n" denies: the call's line says denied, nothing is written, and the turn
// goes on to its reply. Ctrl-D at the prompt then ends the chat cleanly.
func TestChatPTYDeny(t *testing.T) {
	e := newEnv(t)
	p := startPTY(t, e, "chat", "--line", "--approve", "ask", "--fake-script", writeScript(e, "denied.txt", "no", "after the denial"))
	p.expect("> ")
	p.typeLine("write it")
	p.expect("[n] deny")
	p.typeLine("n")
	p.expect("(denied)")
	p.expect(`· write_file {content: "no", path: "denied.txt"} … denied`)
	p.expect("after the denial")
	p.expect("> ")
	if _, err := io.WriteString(p.master, "\x04"); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if _, err := os.Stat(filepath.Join(e.workspace, "denied.txt")); !os.IsNotExist(err) {
		t.Fatalf("a denied write happened: %v", err)
	}
}

// The end of input (Ctrl-D) while a question waits is a denial: the call
// is denied, the turn finishes, and the chat exits with 0 instead of
// hanging or approving.
func TestChatPTYEndOfInputDenies(t *testing.T) {
	e := newEnv(t)
	p := startPTY(t, e, "chat", "--line", "--fake-script", writeScript(e, "eof.txt", "no", "finished anyway"))
	p.expect("> ")
	p.typeLine("write it")
	p.expect("[n] deny")
	if _, err := io.WriteString(p.master, "\x04"); err != nil {
		t.Fatal(err)
	}
	p.expect("(end of input: denied)")
	p.expect(`· write_file {content: "no", path: "eof.txt"} … denied`)
	p.expect("finished anyway")
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if _, err := os.Stat(filepath.Join(e.workspace, "eof.txt")); !os.IsNotExist(err) {
		t.Fatalf("a write answered by end of input happened: %v", err)
	}
}
