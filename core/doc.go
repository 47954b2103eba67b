// Package core loads Agent Cores: the file-backed definition of an agent
// that the Host runs and that an evolving agent may edit (spec host-runtime
// §7.2; toolsets and grants of tool-runtime §1.1 and §3.3).
//
// A core is a directory <agents>/<id>/ holding agent.yaml and an authored
// surface (default agent/): SOUL.md, pipelines.yaml, bootstrap/input/output
// slots (slot.yaml + module.star), authored tools (tool.yaml + module.star,
// only when slots.tools is set) and skills. Load reads all of it into plain
// data (Core, Slot, AuthoredTool, Skill); it executes nothing. Starlark
// modules are parsed, so that a syntax error or a missing entrypoint fails
// the load (and with it the core_load gate) instead of the first call.
//
// LoadGlobal reads the global fallback <home>/agents/agent.yaml (model, ui
// and approval only). InstallTemplates and TemplateFS give the embedded
// default cores (assistant, evolver) and fallback.
//
// # Validation
//
// YAML is decoded strictly (internal/yamlx): unknown keys are refused except
// inside slots (ignored), the option maps of capability grants,
// dependencies, and channels of unknown types; duplicate keys are refused
// everywhere. Configured paths must stay inside the core, symbolic links
// included. Toolsets must be known (Toolsets); an authored tool may not take
// the name of a builtin of a selected toolset, nor of a slot.
//
// # Errors
//
// Every load error is a *demiurge.Error with code ECONFIG and a one-line
// message: the file (relative to the runtime home, "agents/<id>/…", when
// the core lives in an agents directory; else its full path), the line for
// YAML, and the key or value at fault. Strings the spec marks as exact
// (`unknown input pipeline slot: x`, `missing pipelines.yaml: …`,
// `tool name collision: …`, `unknown toolset(s): …`) appear verbatim after
// the location. Load only reads: a failed load leaves the files untouched.
//
// # Concurrency
//
// Load and LoadGlobal may run concurrently. A Core is immutable after Load
// and safe for concurrent reads; callers must not modify its maps or
// slices. Toolsets is read-only.
package core
