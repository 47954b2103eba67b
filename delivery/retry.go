package delivery

import (
	"math/rand/v2"
	"time"

	"github.com/demiurge/demiurge"
)

// Transient reports whether a route error says the route did not take the
// outbound and may take it on a later attempt: an error coded EUNAVAILABLE
// (the surface is unreachable) or ETIMEOUT (the route's own call to its
// surface timed out before handing it over). Every other route error is
// permanent. A route that cannot tell whether its surface took the outbound
// must not return either code: a retry would then show it twice.
func Transient(err error) bool {
	switch demiurge.ErrorCode(err) {
	case demiurge.EUNAVAILABLE, demiurge.ETIMEOUT:
		return true
	}
	return false
}

// backoff is the wait after failed attempt n (1-based): base·2^(n-1) capped
// at limit, then scaled by (1-jitter/2) for jitter in [0, 1), so that
// dispatchers that failed together do not retry together, and never less
// than half the step.
func backoff(n int, base, limit time.Duration, jitter float64) time.Duration {
	d := base
	for i := 1; i < n && d < limit; i++ {
		d *= 2
	}
	d = min(d, limit)
	return d - time.Duration(float64(d)*jitter/2)
}

// retryAt is when a delivery whose attempt n failed transiently is tried
// again, or the zero time when it has used up its attempts.
func (rt *Runtime) retryAt(n int) time.Time {
	if n >= rt.opts.MaxAttempts {
		return time.Time{}
	}
	return rt.opts.Now().Add(backoff(n, rt.opts.RetryBase, rt.opts.RetryMax, rand.Float64()))
}
