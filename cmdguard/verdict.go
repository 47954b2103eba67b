package cmdguard

// Action is what the Host does with a reviewed command.
type Action string

// Actions, weakest first.
const (
	// Allow runs the command without asking (a literal read-only command).
	Allow Action = "allow"
	// Prompt asks for approval first.
	Prompt Action = "prompt"
	// Block refuses the command before any approval is asked.
	Block Action = "block"
)

// Risk levels used in verdicts: allow is low, prompt is high, block is
// critical. Medium is part of the shared risk vocabulary but no guard rule
// produces it.
const (
	RiskLow      = "low"
	RiskMedium   = "medium"
	RiskHigh     = "high"
	RiskCritical = "critical"
)

// Candidate names: which normalised form of the command decided a verdict.
const (
	CandidateRaw        = "raw"           // the command, line continuations removed
	CandidateANSI       = "ansi-stripped" // terminal escape sequences removed too
	CandidateNormalized = "normalized"    // NFKC, confusables folded, invisible characters removed
)

// Verdict is the review of one command.
type Verdict struct {
	Action Action
	// Risk is low (allow), high (prompt) or critical (block).
	Risk string
	// Reason is a short human-readable sentence, e.g.
	// "unrecognized terminal command: foo".
	Reason string
	// RuleKey names the rule that decided, e.g. "safe-command",
	// "file-delete", "rm-critical-path"; it is the stem of the approval
	// cache key (see CacheKey).
	RuleKey string
	// Fingerprint is the first 16 hex digits of the fingerprint of the
	// command alone (Fingerprint(command, Execution{})).
	Fingerprint string
	// Candidate names the normalised form that decided (CandidateRaw,
	// CandidateANSI or CandidateNormalized).
	Candidate string
	// Exact reports whether a session approval of this command must be
	// bound to the command itself (its cache key carries the fingerprint)
	// rather than cover every command with the same rule key: true for the
	// fingerprinted rule keys, for filename expansion and inline environment
	// overlays, and for any command of more than one segment.
	Exact bool
}

func (a Action) rank() int {
	switch a {
	case Allow:
		return 0
	case Prompt:
		return 1
	default:
		return 2
	}
}

func riskRank(r string) int {
	switch r {
	case RiskLow:
		return 0
	case RiskMedium:
		return 1
	case RiskHigh:
		return 2
	default:
		return 3
	}
}

// stricter reports whether a outranks b by (action, risk). Equal verdicts
// are not stricter, so the earlier candidate keeps a tie.
func stricter(a, b Verdict) bool {
	if a.Action.rank() != b.Action.rank() {
		return a.Action.rank() > b.Action.rank()
	}
	return riskRank(a.Risk) > riskRank(b.Risk)
}

func allowVerdict() Verdict {
	return Verdict{Action: Allow, Risk: RiskLow, Reason: "safe terminal command", RuleKey: "safe-command"}
}

func promptVerdict(reason, key string) Verdict {
	return Verdict{Action: Prompt, Risk: RiskHigh, Reason: reason, RuleKey: key}
}

func blockVerdict(h hardline) Verdict {
	return Verdict{Action: Block, Risk: RiskCritical, Reason: h.reason, RuleKey: h.key}
}

// hardline is a destructive finding: always a block.
type hardline struct {
	reason string
	key    string
}

func (h hardline) found() bool { return h.key != "" }
