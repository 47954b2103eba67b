package coregate

import (
	"errors"
	"strings"
)

// LocalApproval asks LocalGates for the approval_security gate of a local
// save.
type LocalApproval struct {
	Base    string // the live revision the save is on
	Confirm string // the operator's token, "" when none
	// Issue puts a fresh token in a refusal: only the operator's own
	// command (`demiurge core save`) asks for one; a save before a turn,
	// whose errors can reach a model, names the command instead.
	Issue bool
}

// LocalGates runs the gates of a local save, in order: path_safety,
// artifact, dependency, core_load:<core>…, approval_security (passes an
// edit that loosens nothing, or one approval.Confirm confirms exactly),
// then cross_core_references. It returns the token it issued for a
// refusal, if any; an error is the Host key's.
func (e *Edit) LocalGates(approval LocalApproval, tokens *Tokens) ([]Gate, string, error) {
	gates := []Gate{e.PathSafety(), e.Artifact(), e.Dependency()}
	gates = append(gates, e.CoreLoad()...)
	g, token, err := e.approvalSecurity(approval, tokens)
	if err != nil {
		return nil, "", err
	}
	gates = append(gates, g, e.CrossCore())
	return gates, token, nil
}

// approvalSecurity passes an edit that loosens nothing, or one a valid
// token confirms; a refusal names every loosening and the command that
// confirms it (with a fresh token when approval.Issue).
func (e *Edit) approvalSecurity(approval LocalApproval, tokens *Tokens) (Gate, string, error) {
	g := Gate{Phase: PhaseApprovalSecurity, Passed: true}
	sr, err := e.Security(false)
	if err != nil || len(sr.Approval) == 0 {
		return g, "", err
	}
	data := map[string]any{"manual_review_required": true, "changes": sr.Approval}
	g.Data = data
	c := saveConfirmation(approval.Base, e.in.New, sr)
	why := ""
	if approval.Confirm != "" {
		err := tokens.Check(approval.Confirm, c)
		var te *TokenError
		switch {
		case err == nil:
			data["confirmed"] = true
			return g, "", nil
		case errors.As(err, &te):
			why = te.msg + "; "
		default:
			return Gate{}, "", err
		}
	}
	g.Passed = false
	parts := make([]string, len(sr.Approval))
	for i, a := range sr.Approval {
		parts[i] = a.String()
	}
	instruction, token := "run `demiurge core save` to confirm it", ""
	if approval.Issue {
		if token, err = tokens.Issue(c); err != nil {
			return Gate{}, "", err
		}
		instruction = "run `demiurge core save --confirm " + token + "`"
	}
	g.Detail = strings.Join(parts, ", ") + "; " + why + "operator confirmation required: " + instruction
	return g, token, nil
}
