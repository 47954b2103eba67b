package coregate

import (
	"fmt"
	"strings"
)

// Line is the one-line secret-safe description of an MCP declaration, for
// an operator reviewing a change: what would run or be contacted, under
// which approval, with the names (never the values) of its environment
// variables and headers.
func (m *MCPSummary) Line() string {
	if m.ParseError != "" {
		return fmt.Sprintf("server %s: does not parse: %s", m.ServerID, m.ParseError)
	}
	parts := []string{fmt.Sprintf("server %s", m.ServerID), fmt.Sprintf("enabled=%t", m.Enabled), "transport=" + m.Transport}
	if m.Command != "" {
		parts = append(parts, "command="+strings.Join(append([]string{m.Command}, m.Args...), " "))
	}
	if m.Cwd != "" {
		parts = append(parts, "cwd="+m.Cwd)
	}
	if m.URL != "" {
		parts = append(parts, "url="+m.URL)
	}
	if len(m.EnvNames) > 0 {
		parts = append(parts, "env="+strings.Join(m.EnvNames, ","))
	}
	if len(m.HeaderNames) > 0 {
		parts = append(parts, "headers="+strings.Join(m.HeaderNames, ","))
	}
	for _, v := range m.HostVariables {
		parts = append(parts, "host_variable=["+v.String()+"]")
	}
	parts = append(parts, "risk="+m.Risk, "approval="+m.ApprovalPolicy, "connect_approval="+m.EffectiveConnectApprovalPolicy,
		"capabilities="+m.ConnectCapability+","+m.CallCapability)
	return strings.Join(parts, " ")
}
