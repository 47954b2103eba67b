package effect

// SessionGrants counts the unexpired "allow for this session" grants of
// sessionID (a status row; the grants themselves stay private).
func (r *ApprovalRuntime) SessionGrants(sessionID string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	n := 0
	for k, expires := range r.grants {
		if k.Session == sessionID && now.Before(expires) {
			n++
		}
	}
	return n
}
