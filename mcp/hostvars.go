package mcp

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/demiurge/demiurge/policy"
	"github.com/demiurge/demiurge/redact"
)

// HostVariable is one ${NAME} reference of a declaration: the Host
// variable whose value a connection exports, and the env variable or
// header it goes into. It names, never holds, the value.
type HostVariable struct {
	Field    string `json:"field"`    // "env" or "header"
	Key      string `json:"key"`      // the env variable or header it is exported into
	Variable string `json:"variable"` // NAME in ${NAME}
	// Credential is set when the name looks like a credential
	// (redact.CredentialVariable): it is exported only under Grant.
	Credential bool   `json:"credential"`
	Grant      string `json:"grant,omitempty"` // secret.bind:<Variable>, for a credential
	// Exported is false for a credential whose grant the core does not
	// hold: the server does not connect.
	Exported bool `json:"exported"`
}

// String is "env LOG_LEVEL ← ${AWS_SECRET_ACCESS_KEY}".
func (v HostVariable) String() string {
	return v.Field + " " + v.Key + " ← ${" + v.Variable + "}"
}

// BindCapability is the exact grant that lets a declaration export the
// Host variable name: secret.bind:<name>, the grant a terminal secret
// binding needs (a literal default, never a wildcard).
func BindCapability(name string) string { return "secret.bind:" + name }

// HostVariables lists d's ${NAME} references in env values (by env name)
// then header values (by header name), each in the order it appears, a
// name repeated in one value once. grants decides Exported for the
// credential-looking ones (CanExact of BindCapability).
func (d Declaration) HostVariables(grants policy.Grants) []HostVariable {
	var out []HostVariable
	add := func(field string, values map[string]string) {
		for _, k := range slices.Sorted(maps.Keys(values)) {
			for _, name := range refNames(values[k]) {
				v := HostVariable{Field: field, Key: k, Variable: name, Exported: true}
				if redact.CredentialVariable(name) {
					v.Credential, v.Grant = true, BindCapability(name)
					v.Exported = grants.CanExact(v.Grant)
				}
				out = append(out, v)
			}
		}
	}
	add("env", d.Env)
	add("header", d.Headers)
	return out
}

// HostVariableNames are the distinct Host variables of vars, sorted.
func HostVariableNames(vars []HostVariable) []string {
	names := make([]string, 0, len(vars))
	for _, v := range vars {
		names = append(names, v.Variable)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// refNames are the distinct NAMEs of the ${NAME} references in s, in order.
func refNames(s string) []string {
	var out []string
	for _, m := range refPattern().FindAllStringSubmatch(s, -1) {
		if !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	return out
}

// unboundCredential is why d may not connect under grants: the first
// credential-looking Host variable it would export without its exact
// secret.bind grant, in one sentence naming the server, the field and the
// variable; "" when every reference may be exported. It runs before the
// connect approval: a server that cannot connect is not asked about.
func unboundCredential(d Declaration, grants policy.Grants) string {
	var missing []HostVariable
	for _, v := range d.HostVariables(grants) {
		if !v.Exported {
			missing = append(missing, v)
		}
	}
	if len(missing) == 0 {
		return ""
	}
	v := missing[0]
	why := fmt.Sprintf("mcp server %s: %s %s references ${%s}, which looks like a credential; grant %s in the core to export it",
		strconv.Quote(d.ID), v.Field, v.Key, v.Variable, v.Grant)
	if len(missing) > 1 {
		more := make([]string, 0, len(missing)-1)
		for _, o := range missing[1:] {
			more = append(more, o.String())
		}
		why += " (also without a grant: " + strings.Join(more, ", ") + ")"
	}
	return why
}

// hostVariableNotes are the connect approval's notes on what the
// connection exports from the Host environment, in words.
func hostVariableNotes(vars []HostVariable) []string {
	var notes []string
	for _, v := range vars {
		n := "exports Host variable " + v.Variable + " into " + v.Field + " " + v.Key
		if v.Credential && v.Exported {
			n += " (looks like a credential; granted by " + v.Grant + ")"
		}
		notes = append(notes, n)
	}
	return notes
}
