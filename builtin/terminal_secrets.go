package builtin

import (
	"encoding/json"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/policy"
	"github.com/demiurge/demiurge/redact"
)

// maxSecretBindings bounds the secret_bindings of one call (spec
// tool-runtime §7.3).
const maxSecretBindings = 16

// reservedBindingTargets are names a secret binding may not set (compared
// upper-cased): the allowlisted execution environment, HOME, and every
// variable that changes which code a shell or interpreter loads. Binding a
// secret there would either break the command or let the secret steer it.
var reservedBindingTargets = map[string]bool{
	"PATH": true, "LANG": true, "LC_ALL": true, "LC_CTYPE": true, "TERM": true, "COLORTERM": true,
	"TMPDIR": true, "TMP": true, "TEMP": true, "TZ": true,
	"SYSTEMROOT": true, "SYSTEMDRIVE": true, "COMSPEC": true, "PATHEXT": true, "WINDIR": true,
	"HOME": true, "USERPROFILE": true, "SHELL": true, "BASH_ENV": true, "ENV": true,
	"LD_PRELOAD": true, "LD_LIBRARY_PATH": true, "DYLD_INSERT_LIBRARIES": true, "DYLD_LIBRARY_PATH": true,
	"PYTHONHOME": true, "PYTHONPATH": true, "NODE_OPTIONS": true, "RUBYOPT": true, "PERL5OPT": true,
}

// secretBinding is one validated secret_bindings item: the Host variable
// Name (source "env:<Name>") is given to the command as Target, for at
// most ExpiresIn from the moment the call passed its Host checks.
type secretBinding struct {
	Name      string
	Target    string
	ExpiresIn time.Duration
}

// Source is the binding's source as the model wrote it.
func (b secretBinding) Source() string { return "env:" + b.Name }

// Capability is the exact grant the binding needs (spec tool-runtime §3.4).
func (b secretBinding) Capability() string { return "secret.bind:" + b.Name }

// parseSecretBindings validates the secret_bindings argument (spec
// tool-runtime §7.3) for a call whose timeout is timeoutSeconds. A missing,
// null or empty list is no binding.
func parseSecretBindings(args map[string]any, timeoutSeconds int64, background bool) ([]secretBinding, *effect.Outcome) {
	raw, ok := args["secret_bindings"]
	if !ok || raw == nil {
		return nil, nil
	}
	refuse := func(format string, a ...any) ([]secretBinding, *effect.Outcome) {
		out := invalid(format, a...)
		return nil, &out
	}
	items, ok := raw.([]any)
	if !ok {
		return refuse("secret_bindings must be an array")
	}
	if len(items) == 0 {
		return nil, nil
	}
	if len(items) > maxSecretBindings {
		return refuse("secret_bindings supports at most %d entries", maxSecretBindings)
	}
	if background {
		return refuse("secret_bindings are not supported for background terminal commands")
	}
	bindings := make([]secretBinding, 0, len(items))
	targets := map[string]bool{}
	for i, item := range items {
		m, ok := item.(map[string]any)
		if !ok {
			return refuse("secret_bindings[%d] must be an object", i)
		}
		source, _ := m["source"].(string)
		name, ok := strings.CutPrefix(source, "env:")
		if !ok {
			return refuse("secret_bindings[%d].source must use env:<NAME>", i)
		}
		if !envNamePattern.MatchString(name) {
			return refuse("secret_bindings[%d].source has an invalid environment name", i)
		}
		target := name
		if v, given := m["target"]; given && v != nil {
			s, isString := v.(string)
			if !isString || !envNamePattern.MatchString(s) {
				return refuse("secret_bindings[%d].target has an invalid environment name", i)
			}
			target = s
		}
		if reservedBindingTargets[strings.ToUpper(target)] {
			return refuse("secret_bindings[%d].target is a reserved execution environment target: %s", i, target)
		}
		if targets[target] {
			return refuse("duplicate secret binding target: %s", target)
		}
		targets[target] = true
		expires := timeoutSeconds
		if v, given := m["expires_in_seconds"]; given && v != nil {
			n, isInt := exactInt(v)
			if !isInt {
				return refuse("secret_bindings[%d].expires_in_seconds must be an integer", i)
			}
			if n < 1 || n > timeoutSeconds {
				return refuse("secret_bindings[%d].expires_in_seconds must be between 1 and the terminal timeout (%d)", i, timeoutSeconds)
			}
			expires = n
		}
		bindings = append(bindings, secretBinding{Name: name, Target: target, ExpiresIn: time.Duration(expires) * time.Second})
	}
	return bindings, nil
}

// exactInt returns v as an integer when it is one: an integral JSON number.
// Booleans, strings and fractions are not integers.
func exactInt(v any) (int64, bool) {
	switch n := v.(type) {
	case int:
		return int64(n), true
	case int64:
		return n, true
	case float64:
		if n != math.Trunc(n) || math.Abs(n) > 1<<53 {
			return 0, false
		}
		return int64(n), true
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	}
	return 0, false
}

// requireBindGrants checks the exact grant of every binding (spec
// tool-runtime §3.1, §3.4): secret.bind:<NAME> must be a literal default
// grant of the turn, so no wildcard ever hands out a secret.
func requireBindGrants(bindings []secretBinding, grants policy.Grants) *effect.Outcome {
	for _, b := range bindings {
		if !grants.CanExact(b.Capability()) {
			return &effect.Outcome{
				IsError: true, Denial: "capability",
				Content: "exact capability denied: " + b.Capability() + " for host",
				Data:    map[string]any{"capability": b.Capability(), "exact": true},
			}
		}
	}
	return nil
}

// bindingAudit is the audit view of bindings checked at anchor: what is
// bound where, under which grant, until when. It never holds a value.
func bindingAudit(bindings []secretBinding, anchor time.Time) []any {
	out := make([]any, 0, len(bindings))
	for _, b := range bindings {
		entry := map[string]any{"source": b.Source(), "target": b.Target, "capability": b.Capability()}
		if !anchor.IsZero() {
			entry["expires_at"] = demiurge.FormatTime(anchor.Add(b.ExpiresIn).UTC())
		}
		out = append(out, entry)
	}
	return out
}

// boundSecrets are the resolved values of a call's bindings.
type boundSecrets struct {
	env      map[string]string // target → value
	redact   map[string]string // value → "<redacted:TARGET>"
	secrets  []redact.Secret
	deadline time.Time // the earliest binding expiry; zero without bindings
}

// resolveBindings reads the bound values from the Host environment after
// approval (spec tool-runtime §7.3). anchor is when the call passed its Host
// checks; a binding whose time has run out by now, or whose source is
// unset or empty, refuses the call before anything runs.
func resolveBindings(bindings []secretBinding, anchor, now time.Time, getenv func(string) string) (boundSecrets, *effect.Outcome) {
	var bs boundSecrets
	if len(bindings) == 0 {
		return bs, nil
	}
	bs.env = make(map[string]string, len(bindings))
	bs.redact = make(map[string]string, len(bindings))
	for _, b := range bindings {
		expires := anchor.Add(b.ExpiresIn)
		if anchor.IsZero() || !now.Before(expires) {
			out := invalid("secret binding expired before execution: %s", b.Source())
			return boundSecrets{}, &out
		}
		value := ""
		if getenv != nil {
			value = getenv(b.Name)
		}
		if value == "" {
			out := invalid("secret binding source is unavailable: %s", b.Source())
			return boundSecrets{}, &out
		}
		bs.env[b.Target] = value
		bs.redact[value] = redact.Marker(b.Target)
		bs.secrets = append(bs.secrets, redact.Secret{Value: value, Name: b.Target, Source: b.Source()})
		if bs.deadline.IsZero() || expires.Before(bs.deadline) {
			bs.deadline = expires
		}
	}
	return bs, nil
}

// bindingClock remembers when each call with secret bindings passed its
// Host checks, so that a binding's expiry counts from before the approval
// wait: an operator who answers late does not extend how long a secret is
// exposed (spec tool-runtime §7.3). Entries older than the longest
// possible binding are dropped; a call whose entry is missing is treated
// as expired, which is the right answer for every entry that old.
type bindingClock struct {
	now func() time.Time
	max time.Duration // no binding lives longer

	mu sync.Mutex // guards at
	at map[string]time.Time
}

func newBindingClock(now func() time.Time, max time.Duration) *bindingClock {
	return &bindingClock{now: now, max: max, at: map[string]time.Time{}}
}

// start records that the call key passed its checks now and returns the
// time.
func (c *bindingClock) start(key string) time.Time {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, t := range c.at {
		if now.Sub(t) > c.max {
			delete(c.at, k)
		}
	}
	c.at[key] = now
	return now
}

// take returns and forgets the time the call key passed its checks; zero
// when it is not known.
func (c *bindingClock) take(key string) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.at[key]
	delete(c.at, key)
	return t
}

// callKey identifies one tool call within the Host process.
func callKey(inv effect.Invocation) string {
	return strings.Join([]string{inv.Turn.SessionID, inv.Turn.TurnID, inv.Turn.StepID, inv.CallID}, "\x00")
}
