//go:build unix

package vtpty

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/vt"
	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// Term is one pseudo-terminal with a VT emulator reading its output.
type Term struct {
	master *os.File
	tty    *os.File // the slave side while this Term holds it (Open), nil after Start

	writeMu sync.Mutex // one write to the master at a time: keys and replies never interleave

	mu      sync.Mutex // guards everything below
	emu     *vt.Emulator
	cols    int
	rows    int
	changed chan struct{} // closed and replaced whenever the screen may have changed
	at      time.Time     // when the newest output was read
	bytes   int64         // output read so far
	ended   bool          // the output has ended (the terminal is gone)
	paste   bool          // the program has asked for bracketed pastes

	outputDone chan struct{} // closed when the output goroutine has returned
	replyDone  chan struct{} // closed when the reply goroutine has returned

	cmd      *exec.Cmd
	exited   chan struct{} // closed when cmd has been reaped
	state    *os.ProcessState
	waitErr  error
	closing  sync.Once
	closeErr error
}

// Open opens a pseudo-terminal of cols × rows with an emulator reading it.
// TTY is its slave side, for a program the caller runs itself.
func Open(cols, rows int) (*Term, error) {
	if cols < 1 || rows < 1 {
		return nil, fmt.Errorf("vtpty: terminal size %d×%d: want at least 1×1", cols, rows)
	}
	opened, tty, err := pty.Open()
	if err != nil {
		return nil, fmt.Errorf("vtpty: open a pseudo-terminal: %w", err)
	}
	master, err := pollable(opened)
	if err != nil {
		tty.Close()
		return nil, err
	}
	if err := setSize(master, cols, rows); err != nil {
		master.Close()
		tty.Close()
		return nil, err
	}
	t := &Term{
		master: master, tty: tty,
		emu: vt.NewEmulator(cols, rows), cols: cols, rows: rows,
		changed:    make(chan struct{}),
		outputDone: make(chan struct{}),
		replyDone:  make(chan struct{}),
	}
	t.emu.SetCallbacks(vt.Callbacks{
		EnableMode:  func(m ansi.Mode) { t.noteMode(m, true) },
		DisableMode: func(m ansi.Mode) { t.noteMode(m, false) },
	})
	go t.readOutput()
	go t.sendReplies()
	return t, nil
}

// Start runs cmd on a new cols × rows terminal: stdin, stdout and stderr
// are the terminal, cmd runs in a session of its own whose controlling
// terminal it is (so the terminal's hangup and signals reach it as they
// reach a program an operator started). cmd must not have been started and
// must not set Stdin, Stdout, Stderr or SysProcAttr.
func Start(cmd *exec.Cmd, cols, rows int) (*Term, error) {
	if cmd.Stdin != nil || cmd.Stdout != nil || cmd.Stderr != nil || cmd.SysProcAttr != nil {
		return nil, errors.New("vtpty: Start sets the command's standard streams and process attributes; leave them unset")
	}
	t, err := Open(cols, rows)
	if err != nil {
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = t.tty, t.tty, t.tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Close()
		return nil, fmt.Errorf("vtpty: start %s: %w", cmd.Path, err)
	}
	// Only the program holds the slave side now, so the output ends (EIO)
	// when it and whatever inherited its terminal are gone.
	t.tty.Close()
	t.tty = nil
	t.cmd, t.exited = cmd, make(chan struct{})
	go func() {
		err := cmd.Wait()
		t.mu.Lock()
		t.state, t.waitErr = cmd.ProcessState, err
		t.mu.Unlock()
		close(t.exited)
	}()
	return t, nil
}

// TTY is the slave side of a Term from Open (nil for one from Start). It
// stays open until Close.
func (t *Term) TTY() *os.File { return t.tty }

// Pid is the started program's process id (0 for a Term from Open). It is
// also the id of its session and process group.
func (t *Term) Pid() int {
	if t.cmd == nil {
		return 0
	}
	return t.cmd.Process.Pid
}

// readOutput moves the program's output into the emulator until the
// terminal is gone (EIO once no process holds its slave side, or the
// master closed by Close or Hangup).
func (t *Term) readOutput() {
	defer close(t.outputDone)
	buf := make([]byte, 64<<10)
	for {
		n, err := t.master.Read(buf)
		now := time.Now()
		t.mu.Lock()
		if n > 0 {
			t.emu.Write(buf[:n])
			t.at, t.bytes = now, t.bytes+int64(n)
		}
		if err != nil {
			t.ended = true
		}
		t.bump()
		t.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// sendReplies moves the emulator's answers to the program's queries into
// the terminal. It reads until Close ends the emulator's reply pipe, even
// after the terminal is gone: the emulator blocks in its writes until they
// are read.
func (t *Term) sendReplies() {
	defer close(t.replyDone)
	buf := make([]byte, 4096)
	for {
		n, err := t.emu.Read(buf)
		if n > 0 {
			t.writeMu.Lock()
			t.master.Write(buf[:n]) // a terminal gone takes no answers; the draining goes on
			t.writeMu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

// noteMode records the modes the harness acts on. It runs inside the
// emulator's Write, so t.mu is held.
func (t *Term) noteMode(m ansi.Mode, on bool) {
	if m == ansi.ModeBracketedPaste {
		t.paste = on
	}
}

// bump wakes every WaitFor. t.mu is held.
func (t *Term) bump() {
	close(t.changed)
	t.changed = make(chan struct{})
}

// Type sends s as typed input: text as its UTF-8 bytes, keys as the
// constants of this package (Enter, CtrlC, Up, …).
func (t *Term) Type(s string) error {
	t.writeMu.Lock()
	defer t.writeMu.Unlock()
	if _, err := io.WriteString(t.master, s); err != nil {
		return fmt.Errorf("vtpty: type %q: %w", s, err)
	}
	return nil
}

// Paste sends s as a bracketed paste when the program has asked for them
// (as a terminal does), else as typed input.
func (t *Term) Paste(s string) error {
	t.mu.Lock()
	bracketed := t.paste
	t.mu.Unlock()
	if bracketed {
		return t.Type("\x1b[200~" + s + "\x1b[201~")
	}
	return t.Type(s)
}

// Wheel turns the mouse wheel over column x, row y (from 0), up or down,
// encoded as the program's mouse mode asks; with no mouse mode on it sends
// nothing, as a terminal does.
func (t *Term) Wheel(x, y int, up bool) {
	b := vt.MouseWheelDown
	if up {
		b = vt.MouseWheelUp
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.emu.SendMouse(vt.MouseWheel{X: x, Y: y, Button: b})
}

// Resize changes the terminal's size; the kernel tells the program
// (SIGWINCH) and the emulator draws what follows at the new size.
func (t *Term) Resize(cols, rows int) error {
	if cols < 1 || rows < 1 {
		return fmt.Errorf("vtpty: terminal size %d×%d: want at least 1×1", cols, rows)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.emu.Resize(cols, rows)
	t.cols, t.rows = cols, rows
	t.bump()
	return setSize(t.master, cols, rows)
}

// Signal sends sig to the started program.
func (t *Term) Signal(sig os.Signal) error {
	if t.cmd == nil {
		return errors.New("vtpty: Signal needs a Term from Start")
	}
	if err := t.cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("vtpty: signal %v to %d: %w", sig, t.cmd.Process.Pid, err)
	}
	return nil
}

// Hangup closes the terminal as a closed terminal window does: the kernel
// sends SIGHUP to the program's session. The screen keeps what it showed
// last.
func (t *Term) Hangup() error {
	if err := t.master.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
		return fmt.Errorf("vtpty: hang up: %w", err)
	}
	return nil
}

// Close ends the Term: a started program still running has its process
// group killed and is reaped, the terminal is closed and both goroutines
// have returned. It is safe to call more than once.
func (t *Term) Close() error {
	t.closing.Do(func() {
		if t.cmd != nil {
			select {
			case <-t.exited:
			default:
				// The program leads its own process group (Setsid).
				syscall.Kill(-t.cmd.Process.Pid, syscall.SIGKILL)
				t.cmd.Process.Kill()
				<-t.exited
			}
		}
		if err := t.master.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
			t.closeErr = err
		}
		if t.tty != nil {
			t.tty.Close()
		}
		<-t.outputDone
		t.mu.Lock()
		if c, ok := t.emu.InputPipe().(io.Closer); ok {
			c.Close()
		}
		t.mu.Unlock()
		<-t.replyDone
	})
	return t.closeErr
}

// exitError is the error Wait reports for a program that ran and exited
// unsuccessfully: not a failure of the waiting, so Wait gives the state.
type exitError = exec.ExitError

// pollable returns the master side as a file the runtime's poller serves,
// so that closing it ends a pending Read. pty.Open hands it over in
// blocking mode (its ioctls go through File.Fd), where a Read blocks a
// thread that Close cannot wake and the fd stays open until the program
// writes again. f is closed; the returned file has a duplicate of its fd,
// non-blocking and close-on-exec.
func pollable(f *os.File) (*os.File, error) {
	defer f.Close()
	var fd int
	var dupErr error
	raw, err := f.SyscallConn()
	if err == nil {
		err = raw.Control(func(old uintptr) { fd, dupErr = unix.FcntlInt(old, unix.F_DUPFD_CLOEXEC, 0) })
	}
	if err == nil {
		err = dupErr
	}
	if err != nil {
		return nil, fmt.Errorf("vtpty: duplicate the terminal's master side: %w", err)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("vtpty: make the terminal's master side non-blocking: %w", err)
	}
	return os.NewFile(uintptr(fd), f.Name()), nil
}

// setSize sets the terminal's size without File.Fd, which would turn the
// master side back to blocking mode.
func setSize(master *os.File, cols, rows int) error {
	raw, err := master.SyscallConn()
	var ioctlErr error
	if err == nil {
		err = raw.Control(func(fd uintptr) {
			ioctlErr = unix.IoctlSetWinsize(int(fd), unix.TIOCSWINSZ, &unix.Winsize{Col: uint16(cols), Row: uint16(rows)})
		})
	}
	if err == nil {
		err = ioctlErr
	}
	if err != nil {
		return fmt.Errorf("vtpty: set the terminal size to %d×%d: %w", cols, rows, err)
	}
	return nil
}
