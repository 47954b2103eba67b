package tuibench

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/demiurge/demiurge/internal/vtpty"
)

// measureTimeout bounds one measurement: start, transcript, samples, idle.
const measureTimeout = 3 * time.Minute

// quiet is how long the screen must stay unchanged for the UI to count
// as done drawing.
const quiet = 300 * time.Millisecond

// frame is one frame at 60 Hz, the rate a terminal UI draws at.
const frame = time.Second / 60

// composerBase is typed before the timed keystrokes and never deleted, so
// that every timed frame is told apart by text no other part of the
// screen shows; typed extends it with letters the transcript lacks.
const (
	composerBase = "zq"
	typedLetters = "xjvkw"
)

// MeasureKeystrokes starts the UI with a fake provider whose first reply
// is a TranscriptLines-line list, sends one message and waits for the
// list's last line, then times keys keystrokes (typing, then deleting, up
// to 50 characters at a time in the composer), then reads the process's
// CPU time over idle. The home and workspace are made under dir.
func MeasureKeystrokes(ctx context.Context, bin string, env []string, dir string, keys int, idle time.Duration) (k Keystrokes, err error) {
	ctx, cancel := context.WithTimeout(ctx, measureTimeout)
	defer cancel()
	home, workspace := filepath.Join(dir, "home"), filepath.Join(dir, "workspace")
	if err := os.MkdirAll(workspace, 0o700); err != nil {
		return k, err
	}
	script, last, err := transcriptScript(dir)
	if err != nil {
		return k, err
	}
	term, err := startUI(bin, env, home, workspace, "--fake-script", script)
	if err != nil {
		return k, err
	}
	defer term.Close()

	if _, err := term.WaitFor(ctx, "the first frame", func(s *vtpty.Screen) bool { return strings.TrimSpace(s.Text()) != "" }); err != nil {
		return k, err
	}
	if err := term.Type("show me the long list" + vtpty.Enter); err != nil {
		return k, err
	}
	if _, err := term.WaitText(ctx, last); err != nil {
		return k, err
	}
	if err := settle(ctx, term, quiet); err != nil {
		return k, err
	}
	if err := term.Type(composerBase); err != nil {
		return k, err
	}
	if _, err := term.WaitText(ctx, composerBase); err != nil {
		return k, err
	}

	width := min(50, cols-20)
	text, typing := composerBase, true
	// Keys come at moments unrelated to the UI's frame clock, as typing
	// does: a pause of up to two 60 Hz frames before each key spreads them
	// over the frame's phases (a key sent right after a frame would wait
	// a whole frame each time). The sequence is the same on every run.
	pauses := rand.New(rand.NewPCG(14, 16))
	for len(k.Samples) < keys {
		select {
		case <-time.After(time.Duration(pauses.Int64N(int64(2 * frame)))):
		case <-ctx.Done():
			return k, ctx.Err()
		}
		n := len(text) - len(composerBase)
		if typing && n == width {
			typing = false
		} else if !typing && n == 0 {
			typing = true
		}
		var key, gone string
		if typing {
			key = typedLetters[n%len(typedLetters) : n%len(typedLetters)+1]
			text += key
		} else {
			key, gone = vtpty.Backspace, text
			text = text[:len(text)-1]
		}
		d, err := keystroke(ctx, term, key, text, gone)
		if err != nil {
			return k, err
		}
		k.Samples = append(k.Samples, d)
	}

	if err := settle(ctx, term, quiet); err != nil {
		return k, err
	}
	k.Idle = idle
	before := term.Screen().Bytes
	if k.IdleCPU, err = idleCPU(ctx, term.Pid(), idle); err != nil {
		return k, err
	}
	k.IdleOutput = term.Screen().Bytes - before
	return k, nil
}

// keystroke types key and returns the time until the output showing want
// (and no longer gone, when set) reached the terminal.
func keystroke(ctx context.Context, term *vtpty.Term, key, want, gone string) (time.Duration, error) {
	sent := time.Now()
	if err := term.Type(key); err != nil {
		return 0, err
	}
	s, err := term.WaitFor(ctx, fmt.Sprintf("the composer showing %q", want), func(s *vtpty.Screen) bool {
		return s.Contains(want) && (gone == "" || !s.Contains(gone))
	})
	if err != nil {
		return 0, err
	}
	if s.At.Before(sent) {
		return 0, fmt.Errorf("the composer showed %q before the key was sent; %s", want, s)
	}
	return s.At.Sub(sent), nil
}

// transcriptScript writes the fake provider script whose first reply is
// the TranscriptLines-line list and returns its path and the list's last
// line.
func transcriptScript(dir string) (path, last string, err error) {
	// Lines without spaces, ended by hard line breaks: the fake provider
	// streams a reply in word-sized deltas, and the transcript is the
	// figure's setting, not its subject, so it arrives in one.
	var b strings.Builder
	for i := 1; i <= TranscriptLines; i++ {
		last = fmt.Sprintf("line-%05d-of-the-long-transcript", i)
		b.WriteString(last)
		if i < TranscriptLines {
			b.WriteString("\\\n")
		}
	}
	reply, err := json.Marshal(b.String())
	if err != nil {
		return "", "", err
	}
	path = filepath.Join(dir, "transcript-script.json")
	if err := os.WriteFile(path, []byte(`[{"content":`+string(reply)+`}]`), 0o600); err != nil {
		return "", "", err
	}
	return path, last, nil
}
