package urlpolicy

import (
	"strconv"
	"strings"
)

// Target is the decision's audit form of the URL:
// "<scheme>://<host or [v6]>[:port]", the port only when it is not the
// scheme's default. It never carries userinfo, path, query or fragment.
// A decision made at dial time has no scheme; its target is "host:port".
// An unparsable URL has the empty target.
func (d Decision) Target() string {
	if d.Scheme == "" && d.Hostname == "" {
		return ""
	}
	host := d.Hostname
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if d.Scheme == "" {
		return host + ":" + strconv.Itoa(d.Port)
	}
	if d.Port == defaultPort(d.Scheme) || d.Port == 0 {
		return d.Scheme + "://" + host
	}
	return d.Scheme + "://" + host + ":" + strconv.Itoa(d.Port)
}

// Audit is the decision as approvals, events and results record it: the
// only form in which a URL leaves the policy.
func (d Decision) Audit() map[string]any {
	resolved := make([]any, len(d.Resolved))
	for i, a := range d.Resolved {
		resolved[i] = a.String()
	}
	return map[string]any{
		"allowed":            d.Allowed,
		"reason":             d.Reason,
		"target":             d.Target(),
		"scheme":             d.Scheme,
		"hostname":           d.Hostname,
		"port":               d.Port,
		"resolved_addresses": resolved,
	}
}

// AuditURL returns the audit form of raw without judging it or resolving
// anything: "<scheme>://<host>[:port]" with the host normalised as
// Evaluate does (lowercase, punycode, no trailing dot) and no userinfo,
// path, query or fragment. An unparsable URL gives "".
func AuditURL(raw string) string {
	t, ok := parseTarget(raw)
	if !ok {
		return ""
	}
	return Decision{Scheme: t.scheme, Hostname: t.host, Port: t.port}.Target()
}
