package controlplane

// Held reports, to the external tests, whether a consuming waiter holds task
// id's completion, so a test can wait for WaitConsume to register its hold
// instead of sleeping.
func (w *Worker) Held(id string) bool { return w.held(id) }
