package terminal

import (
	"strings"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/builtin/internal/tool"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/policy"
	"github.com/demiurge/demiurge/redact"
)

// maxSecretBindings bounds the secret_bindings of one call.
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

// Capability is the exact grant the binding needs.
func (b secretBinding) Capability() string { return "secret.bind:" + b.Name }

// parseSecretBindings validates the secret_bindings argument for a call whose
// timeout is timeoutSeconds. A missing,
// null or empty list is no binding.
func parseSecretBindings(items []bindingArg, timeoutSeconds int64, background bool) ([]secretBinding, *effect.Outcome) {
	fail := func(format string, a ...any) ([]secretBinding, *effect.Outcome) {
		out := tool.Invalid(format, a...)
		return nil, &out
	}
	if len(items) == 0 {
		return nil, nil
	}
	if len(items) > maxSecretBindings {
		return fail("secret_bindings supports at most %d entries", maxSecretBindings)
	}
	if background {
		return fail("secret_bindings are not supported for background terminal commands")
	}
	bindings := make([]secretBinding, 0, len(items))
	targets := map[string]bool{}
	for i, item := range items {
		name, ok := strings.CutPrefix(item.Source, "env:")
		if !ok {
			return fail("secret_bindings[%d].source must use env:<NAME>", i)
		}
		if !envNamePattern().MatchString(name) {
			return fail("secret_bindings[%d].source has an invalid environment name", i)
		}
		target := name
		if item.Target != nil {
			if !envNamePattern().MatchString(*item.Target) {
				return fail("secret_bindings[%d].target has an invalid environment name", i)
			}
			target = *item.Target
		}
		if reservedBindingTargets[strings.ToUpper(target)] {
			return fail("secret_bindings[%d].target is a reserved execution environment target: %s", i, target)
		}
		if targets[target] {
			return fail("duplicate secret binding target: %s", target)
		}
		targets[target] = true
		expires := timeoutSeconds
		if n := item.ExpiresInSeconds; n != nil {
			if *n < 1 || *n > timeoutSeconds {
				return fail("secret_bindings[%d].expires_in_seconds must be between 1 and the terminal timeout (%d)", i, timeoutSeconds)
			}
			expires = *n
		}
		bindings = append(bindings, secretBinding{Name: name, Target: target, ExpiresIn: time.Duration(expires) * time.Second})
	}
	return bindings, nil
}

// requireBindGrants checks the exact grant of every binding:
// secret.bind:<NAME> must be a literal default
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
// approval. anchor is when the call passed its Host
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
			out := tool.Invalid("secret binding expired before execution: %s", b.Source())
			return boundSecrets{}, &out
		}
		value := ""
		if getenv != nil {
			value = getenv(b.Name)
		}
		if value == "" {
			out := tool.Invalid("secret binding source is unavailable: %s", b.Source())
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
