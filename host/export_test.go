package host

import (
	"context"
	"crypto/tls"
	"net"
	"time"

	"github.com/demiurge/demiurge/store"
)

// StoreOf exposes a Host's store to the external tests, which check what
// the Host wrote.
func StoreOf(h *Host) *store.DB { return h.store }

// SetBackgroundApprovalTimeout shortens how long a background question
// waits, for the tests of the timeout.
func SetBackgroundApprovalTimeout(h *Host, d time.Duration) { h.links.timeout = d }

// WithWebhookListener serves the webhook channels of a gateway on the
// listeners fn returns, for the tests on loopback port 0.
func WithWebhookListener(o GatewayOptions, fn func(coreID, name string) net.Listener) GatewayOptions {
	o.webhookListener = fn
	return o
}

// WithMailTLS makes the email channels of a gateway trust cfg's
// certificate authority, for the tests' loopback mail servers.
func WithMailTLS(o GatewayOptions, cfg *tls.Config) GatewayOptions {
	o.mailTLS = cfg
	return o
}

// TickSchedules makes one scheduler pass of h at now and waits for the
// runs it started (the multi-Host tests fire a due occurrence at a chosen
// time on two Hosts at once).
func TickSchedules(h *Host, ctx context.Context, now time.Time) (int, error) {
	rep, err := h.scheduler.Tick(ctx, now)
	return rep.Fired, err
}
