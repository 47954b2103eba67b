package cmdguard

import "testing"

// FuzzReview checks the properties every input must keep: Review never
// panics, returns a well-formed verdict, is deterministic, and a plain
// "rm -rf /" command anywhere in a chain is blocked whatever surrounds it.
// The seeds are the review cases, every bypass the guard was hardened
// against (bypassCorpus, also in testdata/fuzz/FuzzReview), and each block
// rule in every code context.
func FuzzReview(f *testing.F) {
	for _, c := range reviewCases {
		f.Add(c.cmd)
	}
	for _, c := range bypassCorpus {
		f.Add(c)
	}
	for _, r := range blockPayloads {
		for _, ctx := range codeContexts {
			f.Add(ctx.wrap(r.payloads[0]))
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		v := Review(s)
		wantRisk := map[Action]string{Allow: RiskLow, Prompt: RiskHigh, Block: RiskCritical}[v.Action]
		if wantRisk == "" || v.Risk != wantRisk || v.RuleKey == "" || v.Reason == "" || len(v.Fingerprint) != 16 {
			t.Fatalf("malformed verdict for %q: %+v", s, v)
		}
		switch v.Candidate {
		case CandidateRaw, CandidateANSI, CandidateNormalized:
		default:
			t.Fatalf("candidate %q for %q", v.Candidate, s)
		}
		if again := Review(s); again != v {
			t.Fatalf("nondeterministic for %q: %+v then %+v", s, v, again)
		}
		if v.Action == Prompt && v.GrantCoverage() == "" {
			t.Fatalf("no grant coverage for %q", s)
		}
		// Running something first never hides a destructive command.
		if v.Action == Block {
			if got := Review("ls; " + s); got.Action != Block {
				t.Fatalf("Review(%q) blocks but Review(%q) = %s %s", s, "ls; "+s, got.Action, got.RuleKey)
			}
		}
		for _, c := range []struct {
			cmd      string
			prefixed bool
		}{{"rm -rf /\n" + s, true}, {"rm -rf / ; " + s, true}, {s + "\nrm -rf /", false}} {
			got := Review(c.cmd)
			if got.Action == Allow {
				t.Fatalf("Review(%q) allowed a plain rm -rf /", c.cmd)
			}
			// Appended after a newline, the command can still be swallowed
			// by an open quote or heredoc in s; prepended, it cannot.
			if c.prefixed && got.Action != Block {
				t.Fatalf("Review(%q) = %s %s, want block", c.cmd, got.Action, got.RuleKey)
			}
		}
	})
}
