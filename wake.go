package demiurge

// Wake-up topics: what a committed write announces to the loops that wait
// for such work (a store's Subscribe), so they need not poll for it. A
// wake-up is a hint to look, never the only way work is found: every
// subscriber still polls at its own, slower pace.
const (
	// TopicTasks: a task was queued for any Host.
	TopicTasks = "tasks"
	// TopicInbox: a channel accepted an inbound message (any Host's
	// gateway worker may run its turn).
	TopicInbox = "inbox"
)

// TopicHostTasks is the topic of a task queued for Host hostID alone.
func TopicHostTasks(hostID string) string { return "tasks:" + hostID }

// TopicCancel is the topic of a cancel request for a task Host hostID runs.
func TopicCancel(hostID string) string { return "cancel:" + hostID }

// TopicWork is the topic of a durable work item of kind that is due now.
func TopicWork(kind string) string { return "work:" + kind }
