// Package delegation turns a delegate_task call (or ctx.agents.spawn from
// a slot) into an agent.spawn task that runs a child agent turn. It
// implements spec host-runtime §6.1, whose numbered steps comments in this
// package refer to ("step 5").
//
// # Contract
//
// Delegate validates a call in the spec's fixed order, each failure a tool
// error with the spec's exact text:
//
//  1. goal blank: "goal is required";
//  2. the child core (core_id, default the caller's core) needs capability
//     agents.spawn:<child>: "capability denied: agents.spawn:<child> for host";
//  3. context_mode not isolated|fork: "unsupported context_mode: <v>";
//  4. the turn's delegation depth ≥ max_depth (absent or 0: 2; a negative
//     value is never deep enough): "delegation depth limit exceeded:
//     max_depth=<n>";
//  5. agent.spawn tasks of this session started by this turn ≥ 4:
//     "delegation limit exceeded: max_children=4";
//  6. running agent.spawn tasks of this session ≥ 2:
//     "delegation limit exceeded: max_concurrent_children=2";
//  7. notify_policy not return_to_parent|silent: "unsupported notify_policy: <v>";
//  8. tools and tool_policy (the child's visible tools, by id), then
//     use_bootstrap ("use_bootstrap must be a boolean"), then input_slots
//     and output_slots.
//
// ArgumentError gives the same sentences for arguments alone (the steps
// that need no turn, in the same order); the delegate_task tool answers
// with it when the argument schema refuses a call, so the model sees the
// tool's sentence and not a JSON Schema error.
//
// On success it submits an agent.spawn task (write scope
// agent-session:<child session id>, the child session id chosen now) and
// answers exactly {"task_id": "<id>"}. The goal and the fork context are
// handed to the task body in memory only: what the store keeps of them is
// redacted with the turn's known secrets. A task left queued by a crashed
// Host therefore has nothing to run, and restart recovery marks it lost.
//
// The task body is Run: it runs the child turn through the ChildRunner the
// Host provides (a delegated_agent scope owning only the child session, the
// resolved slots and tool policy, depth parent+1) and ends the task with
// the child's delivered text as summary, result_ref
// session:<child session>:<child turn>, and blocked_needs_user when the
// child needs the user.
//
// # Concurrency
//
// A Service is safe for concurrent use; it starts no goroutines (the task
// worker runs Run).
package delegation
