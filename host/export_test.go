package host

import "github.com/demiurge/demiurge/store"

// StoreOf exposes a Host's store to the external tests, which check what
// the Host wrote.
func StoreOf(h *Host) *store.DB { return h.store }
