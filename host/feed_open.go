package host

import (
	"context"
	"time"
)

// openFeed starts the session feed and makes it the store's commit
// observer. It closes first of all (it is opened last): subscribers see
// their feeds closed before anything they watch goes away.
func (h *Host) openFeed() error {
	h.feed = newFeedHub(feedLookup{
		turnSession: func(ctx context.Context, turnID string) (string, error) {
			t, err := h.store.Turn(ctx, turnID)
			return t.SessionID, err
		},
		taskOwner: func(ctx context.Context, taskID string) (string, error) {
			t, err := h.store.Task(ctx, taskID)
			return t.OwnerSessionID, err
		},
		parent: h.links.parent,
	})
	h.feed.start()
	h.store.SetCommitObserver(h.feed)
	return h.closers.opened("feed", 5*time.Second, func(ctx context.Context) error {
		h.store.SetCommitObserver(nil)
		return h.feed.close(ctx)
	})
}
