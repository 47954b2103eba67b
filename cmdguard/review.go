package cmdguard

import "strings"

// Review classifies one terminal command. It never fails: whatever it cannot
// model is a prompt, and a destructive pattern found anywhere it can reach
// (nested substitutions, sh -c scripts, eval, chains, subshells) is a block.
//
// The command is reviewed in up to three forms (see candidates) and the
// strictest verdict wins, block > prompt > allow, then by risk; a tie keeps
// the earlier form.
func Review(command string) Verdict {
	v := review(command)
	v.Fingerprint = Fingerprint(command, Execution{})
	if fingerprintedKeys[v.RuleKey] {
		v.Exact = true
	}
	return v
}

func review(command string) Verdict {
	if strings.IndexByte(command, 0) >= 0 {
		// The shell cannot take a NUL; the command is not modelled. A
		// destructive pattern around the NUL still blocks.
		cleaned := strings.ReplaceAll(command, "\x00", " ")
		for _, c := range candidates(cleaned) {
			a := newAnalysis()
			if h := a.hardlineIn(c.text, 0); h.found() {
				v := blockVerdict(h)
				v.Candidate = c.name
				return v
			}
		}
		v := promptVerdict("null bytes are not supported in shell commands", "complex-shell")
		v.Candidate = CandidateRaw
		v.Exact = true
		return v
	}
	cands := candidates(command)
	if len(cands) == 0 {
		v := promptVerdict("empty command", "empty-command")
		v.Candidate = CandidateRaw
		return v
	}
	var best Verdict
	for i, c := range cands {
		v := reviewCandidate(c.text)
		v.Candidate = c.name
		if i == 0 || stricter(v, best) {
			best = v
		}
	}
	return best
}

// reviewCandidate applies the review's steps to one form of the command; the first
// step that applies decides.
func reviewCandidate(cmd string) Verdict {
	if cmd == "" {
		return promptVerdict("empty command", "empty-command")
	}
	// 1-2. Expansions, and destructive payloads inside them.
	// hardlineIn looks into substitution payloads first, then at the
	// commands of the text itself (3-4), recursing into sh -c and eval.
	exp := scanExpansions(cmd)
	a := newAnalysis()
	if h := a.hardlineIn(cmd, 0); h.found() {
		return blockVerdict(h)
	}
	split := splitShell(cmd)
	if a.exhausted {
		// Too large or too nested to review within budget: look at the
		// text with every quote and substitution flattened, then ask.
		if h := a.flattenedHardline(cmd); h.found() {
			return blockVerdict(h)
		}
		v := promptVerdict("command is too large or too deeply nested to review", "complex-shell")
		v.Exact = true
		return v
	}
	compound := len(split.segments) > 1
	// 5. Expansions the guard does not evaluate.
	if exp.ruleKey != "" {
		return exact(promptVerdict(exp.reason, exp.ruleKey), true)
	}
	// 6. Unquoted globbing can name any file.
	if exp.filename {
		return exact(promptVerdict("unquoted filename expansion is not auto-approved", "filename-expansion"), true)
	}
	// 7. Shell syntax the guard does not model.
	if split.unsupported != "" {
		return exact(promptVerdict(split.unsupported, "complex-shell"), true)
	}
	if split.redirection {
		return exact(promptVerdict("shell redirection can write or read arbitrary paths", "shell-redirection"), true)
	}
	// 8. Words of each segment.
	parsed := make([][]string, 0, len(split.segments))
	for _, seg := range split.segments {
		words, err := posixSplit(seg)
		if err != nil {
			return exact(promptVerdict("command has unsupported quoting", "complex-shell"), true)
		}
		if len(words) == 0 {
			return exact(promptVerdict("empty shell segment", "complex-shell"), true)
		}
		parsed = append(parsed, words)
	}
	// Paths before any rule key: a command naming a sensitive file or a
	// path outside the workspace is bound to itself (steps 9's
	// sensitive-path, 10 and 12's path-outside-workspace, moved first).
	if reason, key := pathRules(parsed, cmd); key != "" {
		return exact(promptVerdict(reason, key), true)
	}
	// 9. Per-command token rules.
	if reason, key := promptableTokens(parsed); key != "" {
		return exact(promptVerdict(reason, key), compound)
	}
	// 11. Pipelines only between read-only commands.
	if split.hasPipe() {
		for _, words := range parsed {
			if safeKind(words) != kindRead {
				return exact(promptVerdict("pipeline is only auto-approved for read-only commands", "pipeline"), true)
			}
		}
	}
	// 12. Project code, unknown commands.
	for _, words := range parsed {
		switch safeKind(words) {
		case kindRead:
		case kindDev:
			return exact(promptVerdict("executes workspace or project code", "project-code-execution"), compound)
		default:
			return exact(promptVerdict("unrecognized terminal command: "+commandName(words), "unknown-command"), true)
		}
	}
	// 13.
	return allowVerdict()
}

func exact(v Verdict, e bool) Verdict {
	v.Exact = e
	return v
}
