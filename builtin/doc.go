// Package builtin holds the Host's builtin tools as effect.Definitions. Each
// tool validates and coerces its own arguments and reports problems the model
// should see as error outcomes, never as Go errors.
//
// Definitions returns the tools of the selected toolsets, in toolset order,
// de-duplicated; a toolset member this build does not provide is left out of
// the catalog (a call to it answers "tool not found or not allowed").
package builtin
