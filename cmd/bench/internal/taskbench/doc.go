// Package taskbench measures the task worker for the bench driver and for
// its own Go benchmarks: throughput from submission to success of trivial
// tasks, the latency from a task's end to its completion handler, and the
// scaling of bounded task logs. Each measurement opens its own runtime
// database in the directory it is given (replacing the file if present),
// registers a Host and runs a controlplane.Worker over it, and closes
// everything before returning; no goroutine outlives a call.
//
// It wires the store adapter to the control plane engine like the
// composition root does; it belongs to the bench driver (cmd/bench), which
// alone imports it.
package taskbench
