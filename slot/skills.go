package slot

import (
	"slices"
	"sync"

	sl "go.starlark.net/starlark"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/starlark"
)

// skillRequests collects one input slot's ctx.skills.activate calls. The
// names are committed with the slot's other writes, so a failed slot
// activates nothing. An activation adds to the prompt, so a parallel slot's
// call fails as its add_context does.
type skillRequests struct {
	writable bool
	mu       sync.Mutex
	staged   []string
}

// skillsObject builds ctx.skills for the slot s. activate(name) needs
// skill.activate:<name> or skill.activate (checked when called; a denial
// fails with the capability named) and records the name once.
func skillsObject(can func(string) bool, s demiurge.SlotSpec, req *skillRequests) *starlark.Object {
	return starlark.NewObject("ctx.skills", sl.StringDict{
		"activate": sl.NewBuiltin("activate", func(_ *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
			var name string
			if err := sl.UnpackArgs(b.Name(), args, kwargs, "name", &name); err != nil {
				return nil, err
			}
			if !req.writable {
				return nil, errReadOnlyPrompt
			}
			if !can("skill.activate:"+name) && !can("skill.activate") {
				return nil, demiurge.Errorf(demiurge.EUNAUTHORIZED, "capability denied: skill.activate for %s", s.RelPath)
			}
			req.mu.Lock()
			defer req.mu.Unlock()
			if !slices.Contains(req.staged, name) {
				req.staged = append(req.staged, name)
			}
			return sl.None, nil
		}),
	})
}

// names returns the requested names.
func (r *skillRequests) names() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.staged)
}
