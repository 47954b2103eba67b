// Package builtin assembles the Host's builtin tools: Toolsets names the
// members of each toolset, and Definitions(toolsets, deps) returns the
// tools of the selected toolsets in toolset order, de-duplicated, each
// bound to its part of deps; a toolset member this build does not provide
// is left out of the catalog (a call to it answers "tool not found or not
// allowed").
//
// Each tool lives in the package of its job, which declares the narrow
// Deps it needs: files (read_file, write_file, patch, search_files),
// terminal, web (web_extract), skills (skills_list, skill_view,
// skill_manage), todo, dialog (clarify, tools_list), sessions
// (session_search), tasks (task_list, task_status, task_control,
// yield_until), delegate (delegate_task), evolve (evolve_core,
// rollback_core) and schedules (schedule_manage). What several share sits
// below them, in builtin/internal: tool (typed arguments, results, locks),
// workspace (the workspace sandbox), rootfs (atomic writes and safe reads
// under an os.Root), textread (bounded UTF-8 reads), udiff (unified
// diffs) and htmltext (HTML to text). Only this package imports the
// toolsets, so none of them can reach another.
//
// # Contract
//
// The dispatcher (package effect) validates arguments against each tool's
// schema and checks capability and approval before a call runs; the
// schemas are therefore closed and exact (additionalProperties false,
// required, types, enums, maxima), and each tool decodes its arguments
// once, in Prepare, into a typed struct that follows its schema. Prepare
// makes the tool's pure checks (the ones before approval below) and
// returns the call that carries their results to the approval question
// and to Run; a call whose facts can change while the operator decides
// (a path's links, the terminal's cwd) checks them again after approval.
// A problem the model should see (bad arguments, a missing file, a
// refused path) is an error outcome, never a Go error; a refusal made
// before any side effect has ExecutionStarted false. A Go error means the
// Host itself failed (a store error) or the call was cancelled.
//
// Registry metadata follows spec tool-runtime §1.2. session_search also
// checks the session.read capability itself, whatever its entry's
// capability is, and answers with the capability denial when it is
// missing.
//
// # Argument errors
//
// Where the spec names the sentence a tool answers bad arguments with
// ("unsupported context_mode: shared", "task_id is required",
// "unsupported search target: lines", …), the model sees that sentence
// even when the argument schema refused the call first: the adapters
// implement effect.ArgumentMessenger with the tool's own first checks
// (delegate_task with delegation.ArgumentError).
//
// # Concurrency
//
// Adapters are safe for concurrent use. Within one process, skill_manage
// calls on one core are serialised, and so are todo updates of one
// session; nothing coordinates separate Host processes, whose turns of one
// session the store's admission lease already serialises.
package builtin
