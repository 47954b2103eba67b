package coregate

// Proposal names an evolve run's proposal for its review token.
type Proposal struct {
	RunID    string
	CoreID   string  // the run's target core
	Base     string  // the revision the run started from
	Revision *string // the proposal commit; nil when there is none
}

// ProposalReview is what the gates found of a proposal.
type ProposalReview struct {
	Gates    []Gate
	MCP      []MCPChange
	Approval []ApprovalChange
	// Token is a fresh review token when the proposal changes MCP
	// declarations or loosens approval (manual review required), else "".
	Token string
	// Confirmation is what Token confirms, for Tokens.Check at promotion;
	// nil when Token is "".
	Confirmation *Confirmation
}

// ReviewProposal runs the gates of an evolve proposal, in order:
// path_safety, artifact, dependency, core_load:<core>…, mcp_security,
// approval_security, cross_core_references. The two security gates pass
// but, when they find changes, carry them with manual_review_required and
// the review token in their data. An error is the Host key's or a read's.
func (e *Edit) ReviewProposal(p Proposal, tokens *Tokens) (*ProposalReview, error) {
	out := &ProposalReview{Gates: []Gate{e.PathSafety(), e.Artifact(), e.Dependency()}}
	out.Gates = append(out.Gates, e.CoreLoad()...)
	sr, err := e.Security(true)
	if err != nil {
		return nil, err
	}
	if sr.Digest != "" {
		c := promoteConfirmation(p, sr)
		if out.Token, err = tokens.Issue(c); err != nil {
			return nil, err
		}
		out.Confirmation = &c
	}
	mcp := Gate{Phase: PhaseMCPSecurity, Passed: true}
	if len(sr.MCP) > 0 {
		mcp.Data = map[string]any{"manual_review_required": true, "changed_paths": mcpChangedPaths(sr.MCP), "changes": sr.MCP, "review_token": out.Token}
		out.MCP = sr.MCP
	}
	approval := Gate{Phase: PhaseApprovalSecurity, Passed: true}
	if len(sr.Approval) > 0 {
		approval.Data = map[string]any{"manual_review_required": true, "changes": sr.Approval, "review_token": out.Token}
		out.Approval = sr.Approval
	}
	out.Gates = append(out.Gates, mcp, approval, e.CrossCore())
	return out, nil
}
