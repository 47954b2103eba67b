package corerepo

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/demiurge/demiurge/coregate"
)

// startReport renders report.md after an evolve start.
func startReport(res *StartResult) string {
	var b strings.Builder
	b.WriteString("# Evolve Start Report\n\n")
	fmt.Fprintf(&b, "- run: %s\n- target core: %s\n- summary: %s\n- changed files: %d\n", res.RunID, res.TargetCoreID, mdLine(res.Summary), len(res.ChangedFiles))
	writeJSONBlock(&b, res)
	return b.String()
}

// reviewReport renders report.md after a review. Everything in it comes
// from the secret-safe review, given without its token (WithoutToken).
func reviewReport(rv *Review) string {
	var b strings.Builder
	b.WriteString("# Evolve Review Report\n\n")
	proposal := "none"
	if rv.ProposalRevision != nil {
		proposal = (*rv.ProposalRevision)[:12]
	}
	fmt.Fprintf(&b, "- run: %s\n- target core: %s\n- base: %s\n- proposal: %s\n- passed: %t\n- summary: %s\n",
		rv.RunID, rv.TargetCoreID, rv.BaseRevision[:12], proposal, rv.Passed, mdLine(rv.Summary))
	if rv.Stale {
		fmt.Fprintf(&b, "- stale: live is now %s; promotion will be refused\n", rv.LiveRevision[:12])
	}
	if rv.ManualReviewRequired {
		fmt.Fprintf(&b, "- manual security review required: `demiurge core evolve review %s` shows the review token to promote with (`demiurge core evolve promote %s --manual-review-token <token>`)\n", rv.RunID, rv.RunID)
	}
	if len(rv.Gates) > 0 {
		b.WriteString("\n## Gates\n\n| phase | passed | detail |\n|---|---|---|\n")
		for _, g := range rv.Gates {
			fmt.Fprintf(&b, "| %s | %t | %s |\n", g.Phase, g.Passed, mdCell(g.Detail))
		}
	}
	if len(rv.MCPChanges) > 0 {
		b.WriteString("\n## MCP declaration changes\n\n")
		for _, c := range rv.MCPChanges {
			fmt.Fprintf(&b, "- %s (%s)\n", c.Path, c.Change)
			for _, side := range []struct {
				name string
				s    *coregate.MCPSummary
			}{{"before", c.Before}, {"after", c.After}} {
				if side.s != nil {
					data, _ := json.Marshal(side.s)
					fmt.Fprintf(&b, "  - %s: `%s`\n", side.name, strings.ReplaceAll(string(data), "`", "'"))
					for _, v := range side.s.HostVariables {
						fmt.Fprintf(&b, "    - %s Host variable: %s\n", side.name, hostVariableLine(v))
					}
				}
			}
		}
	}
	if len(rv.ApprovalChanges) > 0 {
		b.WriteString("\n## Approval and capability changes\n\n")
		for _, a := range rv.ApprovalChanges {
			fmt.Fprintf(&b, "- %s\n", mdLine(a.String()))
		}
	}
	if len(rv.ChangedFiles) > 0 {
		b.WriteString("\n## Changed files\n\n")
		for _, c := range rv.ChangedFiles {
			fmt.Fprintf(&b, "- %s (%s)\n", c.Path, c.Kind)
		}
	}
	if rv.Diff != "" {
		b.WriteString("\n## Diff (secrets redacted)\n\n````diff\n" + strings.ReplaceAll(rv.Diff, "````", "` ` ` `") + "````\n")
	}
	writeJSONBlock(&b, rv)
	return b.String()
}

func writeJSONBlock(b *strings.Builder, v any) {
	data, _ := json.MarshalIndent(v, "", "  ")
	b.WriteString("\n## Result\n\n````json\n" + strings.ReplaceAll(string(data), "````", "` ` ` `") + "\n````\n")
}

func mdLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func mdCell(s string) string { return strings.ReplaceAll(mdLine(s), "|", "\\|") }

// hostVariableLine is one Host variable export in words: what goes where,
// and the grant a credential needs.
func hostVariableLine(v coregate.MCPHostVariable) string {
	line := "`" + strings.ReplaceAll(v.String(), "`", "'") + "`"
	switch {
	case v.Field == "url":
		line += " (not interpolated: the Host refuses a Host variable in a URL)"
	case v.Credential:
		line += " (looks like a credential: exported only if the core grants " + v.Grant + ")"
	}
	return line
}
