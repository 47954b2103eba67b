//go:build unix

package vtpty

import (
	"fmt"
	"strings"
	"time"
)

// Screen is what the terminal shows at one moment.
type Screen struct {
	Cols, Rows int
	// Lines are the rows from top to bottom, trailing blanks removed.
	Lines []string
	// CursorX and CursorY are the cursor's column and row, from 0.
	CursorX, CursorY int
	// AltScreen reports whether the program has switched to the alternate
	// screen.
	AltScreen bool
	// Colored counts the cells drawn with a foreground or background
	// colour of their own; RowColored counts them per row.
	Colored    int
	RowColored []int
	// At is when the newest output shown here was read from the terminal
	// (zero before any output).
	At time.Time
	// Bytes is how much output the terminal has read so far.
	Bytes int64
	// Ended reports that the terminal is gone: nothing will change the
	// screen again.
	Ended bool
}

// Screen returns what the terminal shows now.
func (t *Term) Screen() *Screen {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.snapshot()
}

// snapshot reads the emulator. t.mu is held.
func (t *Term) snapshot() *Screen {
	s := &Screen{Cols: t.cols, Rows: t.rows, AltScreen: t.emu.IsAltScreen(), At: t.at, Bytes: t.bytes, Ended: t.ended}
	s.Lines = strings.Split(t.emu.String(), "\n")
	for len(s.Lines) < t.rows {
		s.Lines = append(s.Lines, "")
	}
	pos := t.emu.CursorPosition()
	s.CursorX, s.CursorY = pos.X, pos.Y
	s.RowColored = make([]int, t.rows)
	for y := range t.rows {
		for x := range t.cols {
			if c := t.emu.CellAt(x, y); c != nil && (c.Style.Fg != nil || c.Style.Bg != nil) {
				s.RowColored[y]++
			}
		}
		s.Colored += s.RowColored[y]
	}
	return s
}

// Text is the screen's rows joined by newlines, without the blank rows at
// its end.
func (s *Screen) Text() string {
	n := len(s.Lines)
	for n > 0 && s.Lines[n-1] == "" {
		n--
	}
	return strings.Join(s.Lines[:n], "\n")
}

// Contains reports whether text is shown within one row.
func (s *Screen) Contains(text string) bool { return s.Row(text) >= 0 }

// Row is the first row (from 0) that shows text, or -1.
func (s *Screen) Row(text string) int {
	for i, l := range s.Lines {
		if strings.Contains(l, text) {
			return i
		}
	}
	return -1
}

// Count is how many rows show text.
func (s *Screen) Count(text string) int {
	n := 0
	for _, l := range s.Lines {
		if strings.Contains(l, text) {
			n++
		}
	}
	return n
}

// String draws the screen in a frame with row numbers, for failure
// messages: the frame shows where each row ends.
func (s *Screen) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "screen %d×%d, cursor at column %d row %d, alt screen %v, %d coloured cells, %d bytes read",
		s.Cols, s.Rows, s.CursorX, s.CursorY, s.AltScreen, s.Colored, s.Bytes)
	if s.Ended {
		b.WriteString(", terminal gone")
	}
	b.WriteString("\n    +" + strings.Repeat("-", s.Cols) + "+\n")
	for i, l := range s.Lines {
		fmt.Fprintf(&b, "%3d |%s\n", i, l)
	}
	b.WriteString("    +" + strings.Repeat("-", s.Cols) + "+")
	return b.String()
}
