// Package process owns the Host's view of operating-system processes.
//
// This first part answers one question reliably: is the process that
// registered itself under pid P still the same process? A bare pid cannot
// answer it, because pids are reused. A start marker can: on Linux it is
// "<boot_id>:<starttime>", where boot_id comes from
// /proc/sys/kernel/random/boot_id and starttime is field 22 of
// /proc/<pid>/stat (clock ticks since boot). A marker taken now equals a
// stored marker only when the pid names the very same process of the very
// same boot.
//
// # Usage
//
//	marker, err := process.StartMarker(os.Getpid()) // store it beside the pid
//	...
//	if !process.Alive(pid, marker) { /* the registering process is gone */ }
//
// # Platforms
//
// Linux keeps the full guarantee. On other platforms StartMarker returns an
// EUNSUPPORTED error and Alive falls back to probing the pid alone (signal 0
// on Unix, opening the process on Windows). That probe cannot tell a reused
// pid from the original process, so callers there must also rely on a lease
// expiry; Alive errs towards "alive" when the platform cannot answer.
//
// # Concurrency
//
// Every function is safe for concurrent use; none keeps state.
package process
