package delivery

import (
	"testing"
	"time"
)

func TestBackoff(t *testing.T) {
	tests := []struct {
		n      int
		jitter float64
		want   time.Duration
	}{
		{1, 0, time.Second},
		{2, 0, 2 * time.Second},
		{3, 0, 4 * time.Second},
		{4, 0, 8 * time.Second},
		{7, 0, 60 * time.Second},  // 64s capped
		{40, 0, 60 * time.Second}, // no overflow however many attempts
		{1, 0.5, 750 * time.Millisecond},
		{3, 0.999999, 2*time.Second + 2*time.Microsecond}, // never below half the step
		{7, 0.5, 45 * time.Second},
	}
	for _, tt := range tests {
		if got := backoff(tt.n, time.Second, time.Minute, tt.jitter); got != tt.want {
			t.Errorf("backoff(%d, jitter %v)=%v, want %v", tt.n, tt.jitter, got, tt.want)
		}
	}
}

func TestRetryAtStopsAfterMaxAttempts(t *testing.T) {
	now := time.Date(2026, 7, 4, 1, 0, 0, 0, time.UTC)
	rt := NewRuntime(nil, nil, Options{Now: func() time.Time { return now }, MaxAttempts: 3})
	for n := 1; n <= 2; n++ {
		at := rt.retryAt(n)
		lo, hi := now.Add(backoff(n, DefaultRetryBase, DefaultRetryMax, 0.999999)), now.Add(backoff(n, DefaultRetryBase, DefaultRetryMax, 0))
		if at.Before(lo) || at.After(hi) {
			t.Fatalf("retryAt(%d)=%v, want within [%v, %v]", n, at, lo, hi)
		}
	}
	if at := rt.retryAt(3); !at.IsZero() {
		t.Fatalf("retryAt(3)=%v with MaxAttempts 3, want none", at)
	}
}
