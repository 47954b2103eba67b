package slash_test

import (
	"strings"
	"testing"
)

// A turn id of another session is not shown: /trace falls back to this
// session's latest turn, as for an unknown id.
func TestTraceOtherSessionFallsBack(t *testing.T) {
	h := newHost(t)
	mine, other := newEnv(t, h), newEnv(t, h)
	own := mine.turn(t, "mine")
	theirs := other.turn(t, "theirs")
	out := run(t, mine, "/trace "+theirs.TurnID).Notice
	contains(t, "/trace of another session's turn", out, "## Trace "+own.TurnID)
	if strings.Contains(out, theirs.TurnID) {
		t.Fatalf("/trace shows another session's turn:\n%s", out)
	}
}
