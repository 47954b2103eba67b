package slot

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	sl "go.starlark.net/starlark"

	"github.com/demiurge/demiurge"
)

// optString and optBool unpack optional Starlark arguments where None means
// "not given" (the "name??" form of UnpackArgs leaves them unset).
type optString struct {
	set bool
	val string
}

func (o *optString) Unpack(v sl.Value) error {
	s, ok := v.(sl.String)
	if !ok {
		return fmt.Errorf("got %s, want string or None", v.Type())
	}
	o.set, o.val = true, string(s)
	return nil
}

type optBool struct {
	set bool
	val bool
}

func (o *optBool) Unpack(v sl.Value) error {
	b, ok := v.(sl.Bool)
	if !ok {
		return fmt.Errorf("got %s, want bool or None", v.Type())
	}
	o.set, o.val = true, bool(b)
	return nil
}

// historyRule is what a lane allows and defaults to when a delivery does not
// say whether it writes history.
type historyRule struct {
	slotDefault  string // demiurge.SlotSpec.HistoryPolicy; "" = undeclared
	phaseDefault string // input: transient; serial output: persist; parallel output: transient
	allowWrite   bool   // false in parallel output
}

// resolve returns the history policy of one delivery:
// an explicit history_policy wins, then write_history, then the slot's
// declared default (ignored where the lane cannot write history), then the
// phase default.
func (h historyRule) resolve(explicit optString, write optBool, visible bool) (string, error) {
	var policy string
	switch {
	case explicit.set:
		policy = explicit.val
	case write.set && write.val:
		policy = demiurge.HistoryPersist
	case write.set:
		policy = demiurge.HistoryTransient
	case h.slotDefault != "" && (h.allowWrite || h.slotDefault == demiurge.HistoryTransient):
		policy = h.slotDefault
	default:
		policy = h.phaseDefault
	}
	if !demiurge.ValidHistoryPolicy(policy) {
		return "", fmt.Errorf("invalid history policy: %s", policy)
	}
	writes := policy != demiurge.HistoryTransient
	if writes && !h.allowWrite {
		return "", errors.New("parallel output modules cannot write session history")
	}
	if !visible && !writes {
		return "", errors.New("send with visible=False and write_history=False has no effect")
	}
	return policy, nil
}

// isURL reports whether s is an http or https URL with a host.
func isURL(s string) bool {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return false
	}
	scheme := strings.ToLower(u.Scheme)
	return scheme == "http" || scheme == "https"
}

// containedPath is the Host's rule for the files a turn may hand to a
// delivery (demiurge.ContainedPath): inside the workspace or the session
// artifact root, symbolic links resolved.
func containedPath(p, workspace, sessionRoot string) (string, bool) {
	return demiurge.ContainedPath(p, workspace, sessionRoot)
}
