package host

import "context"

// HostNames returns the machine each of the Host ids ran on, for the
// operator's views (which Host runs a task): the ids the ledger's hosts
// table still knows (a stopped Host's row is kept for a day); the others
// are absent.
func (h *Host) HostNames(ctx context.Context, ids []string) (map[string]string, error) {
	return h.store.HostNames(ctx, ids)
}
