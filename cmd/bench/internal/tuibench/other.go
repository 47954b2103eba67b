//go:build !linux

package tuibench

import (
	"context"
	"time"
)

// MeasureKeystrokes needs Linux.
func MeasureKeystrokes(context.Context, string, []string, string, int, time.Duration) (Keystrokes, error) {
	return Keystrokes{}, ErrUnsupported
}

// MeasureSessionRSS needs Linux.
func MeasureSessionRSS(context.Context, string, []string, string, int) (Memory, error) {
	return Memory{}, ErrUnsupported
}
