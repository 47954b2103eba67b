package slot

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	sl "go.starlark.net/starlark"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/starlark"
)

// RunInput runs the input phase. Parallel slots start first on goroutines
// owned by the call, serial slots run in order, and the parallel slots are
// awaited before RunInput returns. Each slot sees ctx {turn, slot_id,
// slot_path, workspace, capability, history, input}; ctx.input has raw_text,
// raw_input, attachments, workspace, session_root (all read-only),
// add_context, add, send_text, send_image/audio/video/file, progress and
// notice. Serial slots write the prompt; a parallel slot's add_context/add
// fails with "parallel input modules cannot modify the current prompt", but
// it may send.
//
// After the lanes: system fragments joined "\n\n" are SystemContext and one
// system_context contribution; user fragments joined "\n\n" are UserText
// (empty → EINVALID "input pipeline did not produce a user message");
// user fragments whose policy is persist are PersistedUserText.
//
// Failures are handled as in RunBootstrap; the result carries the events
// recorded so far even with an error.
func (r *Runtime) RunInput(ctx context.Context, specs []demiurge.SlotSpec, env demiurge.InputEnv) (demiurge.InputResult, error) {
	if err := validate(demiurge.PhaseInput, specs); err != nil {
		return demiurge.InputResult{}, err
	}
	turn, err := turnObject(env.Turn)
	if err != nil {
		return demiurge.InputResult{}, err
	}
	shared, err := inputShared(env)
	if err != nil {
		return demiurge.InputResult{}, err
	}

	var committed []fragment // appended by serial slots only, on this goroutine
	var skills []string      // likewise
	events, intents, err := r.runLanes(ctx, demiurge.PhaseInput, specs, func(ctx context.Context, s demiurge.SlotSpec, parallel bool) slotRun {
		return r.runSlot(ctx, demiurge.PhaseInput, s, func() (invocation, error) {
			snd := &sender{
				slotID:      s.ID,
				rule:        historyRule{slotDefault: s.HistoryPolicy, phaseDefault: demiurge.HistoryTransient, allowWrite: true},
				workspace:   env.Workspace,
				sessionRoot: env.SessionRoot,
			}
			pb := &promptBuilder{writable: !parallel, slotDefault: s.HistoryPolicy}
			members := snd.members()
			maps.Copy(members, shared)
			members["add_context"] = sl.NewBuiltin("add_context", pb.addContext)
			members["add"] = sl.NewBuiltin("add", pb.add)
			can := slotCan(env.Caps, s)
			asked := &skillRequests{writable: !parallel}
			ctxObj := starlark.NewObject("ctx", sl.StringDict{
				"turn":       turn,
				"slot_id":    sl.String(s.ID),
				"slot_path":  sl.String(s.RelPath),
				"workspace":  sl.String(env.Workspace),
				"capability": capabilityObject(env.Caps, s),
				"history":    historyObject(env.History),
				"agents":     agentsObject(env.Agents, s),
				"tools":      toolsObject(env.Tools, can, s),
				"skills":     skillsObject(can, s, asked),
				"state":      stateObject(env.State, can, s),
				"input":      starlark.NewObject("ctx.input", members),
			})
			inv := invocation{ctx: ctxObj, sender: snd, core: env.Turn.CoreID, revision: env.Turn.CoreRevision, caps: env.Caps}
			if !parallel {
				inv.commit = func() {
					committed = append(committed, pb.staged...)
					for _, name := range asked.names() {
						if !slices.Contains(skills, name) {
							skills = append(skills, name)
						}
					}
				}
			}
			return inv, nil
		})
	})
	if err != nil {
		return demiurge.InputResult{Events: events}, err
	}

	res := demiurge.InputResult{
		UserText:          joinFragments(committed, promptUser, false),
		PersistedUserText: joinFragments(committed, promptUser, true),
		SystemContext:     joinFragments(committed, promptSystem, false),
		Skills:            skills,
		Intents:           intents,
		Events:            events,
	}
	if res.SystemContext != "" {
		res.Contributions = []demiurge.Contribution{{Placement: demiurge.PlacementSystemContext, Role: demiurge.RoleSystem, Text: res.SystemContext}}
	}
	if res.UserText == "" {
		return demiurge.InputResult{Events: events}, demiurge.Errorf(demiurge.EINVALID, "input pipeline did not produce a user message")
	}
	return res, nil
}

// inputShared builds the read-only members of ctx.input, shared (frozen) by
// every slot of the phase.
func inputShared(env demiurge.InputEnv) (sl.StringDict, error) {
	attachments := make([]sl.Value, 0, len(env.Attachments))
	for i, a := range env.Attachments {
		v, err := starlark.ToStarlark(a)
		if err != nil {
			return nil, demiurge.WrapError(demiurge.EINTERNAL, err, "input attachment %d is not JSON-compatible", i)
		}
		attachments = append(attachments, v)
	}
	meta, err := metadataValue("turn metadata", env.Turn.Metadata)
	if err != nil {
		return nil, err
	}
	att := sl.Tuple(attachments)
	shared := sl.StringDict{
		"raw_text":     sl.String(env.RawText),
		"attachments":  att,
		"workspace":    sl.String(env.Workspace),
		"session_root": sl.String(env.SessionRoot),
		"raw_input": starlark.NewObject("ctx.input.raw_input", sl.StringDict{
			"text":        sl.String(env.RawText),
			"metadata":    meta,
			"attachments": att,
		}),
	}
	// Freeze now, before any goroutine shares them: freezing writes a flag,
	// re-freezing a frozen value only reads it.
	shared.Freeze()
	return shared, nil
}

// Prompt sections.
const (
	promptUser   = "user"
	promptSystem = "system"
)

type fragment struct {
	section string
	text    string
	policy  string
}

// promptBuilder implements ctx.input.add_context and ctx.input.add for one
// slot invocation. Fragments are staged and committed only if the slot
// completes.
type promptBuilder struct {
	writable    bool
	slotDefault string
	staged      []fragment
}

var errReadOnlyPrompt = errors.New("parallel input modules cannot modify the current prompt")

// addContext is add_context(content, role="system", write_history=None).
// write_history defaults to role == "user"; system fragments never reach
// history whatever it says.
func (p *promptBuilder) addContext(_ *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	if !p.writable {
		return nil, errReadOnlyPrompt
	}
	var content string
	role := promptSystem
	var write optBool
	if err := sl.UnpackArgs(b.Name(), args, kwargs, "content", &content, "role?", &role, "write_history??", &write); err != nil {
		return nil, err
	}
	role = strings.TrimSpace(role)
	if role != promptUser && role != promptSystem {
		return nil, fmt.Errorf("invalid input context role: %s", role)
	}
	writes := role == promptUser
	if write.set {
		writes = write.val
	}
	policy := demiurge.HistoryTransient
	if writes {
		policy = demiurge.HistoryPersist
	}
	p.stage(role, content, policy)
	return sl.None, nil
}

// add is add(section, content, history_policy=None): system fragments default
// to transient, user fragments to the slot's history policy (persist when the
// slot declares none).
func (p *promptBuilder) add(_ *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	if !p.writable {
		return nil, errReadOnlyPrompt
	}
	var section, content string
	var explicit optString
	if err := sl.UnpackArgs(b.Name(), args, kwargs, "section", &section, "content", &content, "history_policy??", &explicit); err != nil {
		return nil, err
	}
	section = strings.TrimSpace(section)
	if section != promptUser && section != promptSystem {
		return nil, fmt.Errorf("invalid input context role: %s", section)
	}
	policy := explicit.val
	if !explicit.set {
		switch {
		case section == promptSystem:
			policy = demiurge.HistoryTransient
		case p.slotDefault != "":
			policy = p.slotDefault
		default:
			policy = demiurge.HistoryPersist
		}
	}
	if !demiurge.ValidHistoryPolicy(policy) {
		return nil, fmt.Errorf("invalid history policy: %s", policy)
	}
	p.stage(section, content, policy)
	return sl.None, nil
}

// stage keeps content trimmed; blank content is ignored.
func (p *promptBuilder) stage(section, content, policy string) {
	if text := strings.TrimSpace(content); text != "" {
		p.staged = append(p.staged, fragment{section: section, text: text, policy: policy})
	}
}

func joinFragments(frags []fragment, section string, persistedOnly bool) string {
	var parts []string
	for _, f := range frags {
		if f.section == section && (!persistedOnly || f.policy == demiurge.HistoryPersist) {
			parts = append(parts, f.text)
		}
	}
	return strings.Join(parts, "\n\n")
}
