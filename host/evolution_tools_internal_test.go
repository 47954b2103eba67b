package host

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/demiurge/demiurge/coregate"
	"github.com/demiurge/demiurge/corerepo"
)

// The model never sees the operator's confirmation token, in any field of
// a review, and the repository's own review is left untouched.
func TestModelReviewDropsTheToken(t *testing.T) {
	const token = "mcp-review:0123456789abcdef"
	r := &corerepo.Review{
		RunID: "evolve_1", ReviewToken: token, ManualReviewRequired: true,
		Gates: []coregate.Gate{
			{Phase: "mcp_security", Passed: true, Data: map[string]any{"manual_review_required": true, "review_token": token}},
			{Phase: "approval_security", Passed: true, Data: map[string]any{"review_token": token, "changes": []string{"x"}}},
			{Phase: "path_safety", Passed: true},
		},
	}
	b, err := json.Marshal(modelReview(r))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), token) {
		t.Fatalf("model view carries the token: %s", b)
	}
	if !strings.Contains(string(b), `"manual_review_required":true`) {
		t.Fatalf("model view lost the review facts: %s", b)
	}
	if r.ReviewToken != token || r.Gates[0].Data.(map[string]any)["review_token"] != token {
		t.Fatal("modelReview changed the repository's review")
	}
}
