// Package tasks holds the model-facing task tools (task_list,
// task_status, task_control, yield_until) over the task ledger (spec
// host-runtime §6.2): every lookup goes through the turn's principal
// scope, and a foreign task reads like a missing one.
package tasks
