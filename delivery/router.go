package delivery

import (
	"context"
	"sync"

	"github.com/demiurge/demiurge"
)

// DeliverResult is what the router did with an outbound it did not fail.
type DeliverResult string

const (
	Delivered DeliverResult = "delivered" // a route took it
	Unrouted  DeliverResult = "unrouted"  // no live route for the session (or the turn's route is gone)
)

// Router is the in-memory table of live routes (the spec's
// SessionInteractionRouter). It is safe for concurrent use; it never holds its
// lock while a route delivers.
type Router struct {
	mu        sync.Mutex
	routes    map[string]boundRoute // guarded by mu: token → route
	bySession map[string][]string   // guarded by mu: session → tokens, oldest first
}

type boundRoute struct {
	sessionID string
	route     demiurge.Route
}

// NewRouter returns an empty router.
func NewRouter() *Router {
	return &Router{routes: map[string]boundRoute{}, bySession: map[string][]string{}}
}

// Bind binds route to sessionID and returns the token that unbinds it. The
// most recently bound route of a session receives its outbounds.
func (r *Router) Bind(sessionID string, route demiurge.Route) string {
	token := demiurge.NewID("route")
	r.mu.Lock()
	defer r.mu.Unlock()
	r.routes[token] = boundRoute{sessionID: sessionID, route: route}
	r.bySession[sessionID] = append(r.bySession[sessionID], token)
	return token
}

// Unbind removes the route of token. Unknown tokens are ignored.
func (r *Router) Unbind(token string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	b, ok := r.routes[token]
	if !ok {
		return
	}
	delete(r.routes, token)
	tokens := r.bySession[b.sessionID]
	for i, t := range tokens {
		if t == token {
			tokens = append(tokens[:i:i], tokens[i+1:]...)
			break
		}
	}
	if len(tokens) == 0 {
		delete(r.bySession, b.sessionID)
	} else {
		r.bySession[b.sessionID] = tokens
	}
}

// Deliver hands out to a live route. When ctx carries a route token (see
// demiurge.WithRouteToken: the route admitted for the running turn), only that route is
// considered: if it was unbound the result is Unrouted, never another route.
// Otherwise the most recently bound route of out.SessionID is used. A route
// bound to another session refuses the outbound with EUNAUTHORIZED
// "route bound to session `A` received outbound for `B`". A route's own error
// is returned as is, with an empty result.
func (r *Router) Deliver(ctx context.Context, out demiurge.Outbound) (DeliverResult, error) {
	b, ok := r.lookup(ctx, out.SessionID)
	if !ok {
		return Unrouted, nil
	}
	if b.sessionID != out.SessionID {
		return "", demiurge.Errorf(demiurge.EUNAUTHORIZED, "route bound to session `%s` received outbound for `%s`", b.sessionID, out.SessionID)
	}
	if err := b.route.Deliver(ctx, out); err != nil {
		return "", err
	}
	return Delivered, nil
}

// Bound reports whether sessionID has a live route.
func (r *Router) Bound(sessionID string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.bySession[sessionID]) > 0
}

func (r *Router) lookup(ctx context.Context, sessionID string) (boundRoute, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if token, ok := demiurge.RouteToken(ctx); ok {
		b, ok := r.routes[token]
		return b, ok
	}
	tokens := r.bySession[sessionID]
	if len(tokens) == 0 {
		return boundRoute{}, false
	}
	return r.routes[tokens[len(tokens)-1]], true
}
