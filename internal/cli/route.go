package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/demiurge/demiurge"
)

// collectRoute is the route of `demiurge run`: it accepts deliveries (they
// are sent to the caller through the result and the final text).
type collectRoute struct{}

func (collectRoute) Deliver(context.Context, demiurge.Outbound) error { return nil }

// printRoute is the route of `demiurge chat`: it prints visible deliveries,
// except the text already streamed to the terminal during the turn.
type printRoute struct {
	mu       sync.Mutex // guards out, streamed
	out      io.Writer
	streamed string
}

func (r *printRoute) Deliver(_ context.Context, o demiurge.Outbound) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !o.Visible || strings.TrimSpace(o.Text) == "" {
		return nil
	}
	if strings.TrimSpace(o.Text) == strings.TrimSpace(r.streamed) {
		return nil
	}
	if o.Kind == "progress" || o.Kind == "notice" {
		_, err := fmt.Fprintf(r.out, "[%s] %s\n", o.Kind, o.Text)
		return err
	}
	_, err := fmt.Fprintln(r.out, o.Text)
	return err
}

func (r *printRoute) setStreamed(s string) {
	r.mu.Lock()
	r.streamed = s
	r.mu.Unlock()
}
