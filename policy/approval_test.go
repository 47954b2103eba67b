package policy

import (
	"strings"
	"testing"

	"github.com/demiurge/demiurge"
)

func TestParsePolicy(t *testing.T) {
	tests := []struct {
		in      string
		want    Policy
		wantErr string
	}{
		{"auto", Auto, ""},
		{"prompt", Prompt, ""},
		{"deny", Deny, ""},
		{"  prompt ", Prompt, ""},
		{"Prompt", "", "invalid approval policy: Prompt (allowed: auto, prompt, deny)"},
		{"allow", "", "invalid approval policy: allow (allowed: auto, prompt, deny)"},
		{"", "", `invalid approval policy: "" (allowed: auto, prompt, deny)`},
	}
	for _, tt := range tests {
		got, err := ParsePolicy(tt.in)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("ParsePolicy(%q) err=%v, want %q", tt.in, err, tt.wantErr)
			}
			if demiurge.ErrorCode(err) != demiurge.ECONFIG {
				t.Errorf("ParsePolicy(%q) code=%q, want config", tt.in, demiurge.ErrorCode(err))
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParsePolicy(%q)=%q,%v, want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestStricter(t *testing.T) {
	tests := []struct{ a, b, want Policy }{
		{Auto, Auto, Auto},
		{Auto, Prompt, Prompt},
		{Prompt, Auto, Prompt},
		{Prompt, Deny, Deny},
		{Deny, Auto, Deny},
		{Deny, Prompt, Deny},
		{Prompt, Prompt, Prompt},
		{"bogus", Auto, Deny},
		{Auto, "", Deny},
	}
	for _, tt := range tests {
		if got := Stricter(tt.a, tt.b); got != tt.want {
			t.Errorf("Stricter(%q, %q)=%q, want %q", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestRisk(t *testing.T) {
	for _, in := range []string{"low", "medium", "high", "critical"} {
		if r, err := ParseRisk(in); err != nil || string(r) != in {
			t.Errorf("ParseRisk(%q)=%q,%v", in, r, err)
		}
	}
	if _, err := ParseRisk("severe"); err == nil || err.Error() != "invalid tool risk: severe (allowed: low, medium, high, critical)" {
		t.Errorf("ParseRisk(severe) err=%v", err)
	}
	tests := []struct {
		a, b Risk
		want int
	}{
		{RiskLow, RiskMedium, -1},
		{RiskMedium, RiskHigh, -1},
		{RiskHigh, RiskCritical, -1},
		{RiskCritical, RiskLow, 1},
		{RiskHigh, RiskHigh, 0},
		{"unknown", RiskCritical, 0}, // invalid ranks as critical
		{RiskHigh, "unknown", -1},
	}
	for _, tt := range tests {
		if got := tt.a.Compare(tt.b); got != tt.want {
			t.Errorf("%q.Compare(%q)=%d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestSelectFirstMatchWins(t *testing.T) {
	cfg := ApprovalConfig{
		Default:      "prompt",
		Tools:        map[string]string{"terminal": "auto"},
		Capabilities: map[string]string{"fs.write": "deny", "fs.read": ""},
		Risks:        map[string]string{"critical": "deny", "low": "auto"},
	}
	tests := []struct {
		name, tool, cap, risk, want string
	}{
		{"tool beats capability and risk", "terminal", "fs.write", "critical", "auto"},
		{"capability beats risk", "write_file", "fs.write", "low", "deny"},
		{"risk beats default", "read_file", "fs.read", "low", "auto"},
		{"empty capability value is not set", "read_file", "fs.read", "medium", "prompt"},
		{"default last", "x", "y", "high", "prompt"},
		{"empty keys never match", "", "", "", "prompt"},
	}
	for _, tt := range tests {
		if got := cfg.Select(tt.tool, tt.cap, tt.risk); got != tt.want {
			t.Errorf("%s: Select=%q, want %q", tt.name, got, tt.want)
		}
	}
	if got := (ApprovalConfig{}).Select("t", "c", "low"); got != "" {
		t.Errorf("empty config selected %q", got)
	}
}

func TestFold(t *testing.T) {
	none := ApprovalConfig{}
	tests := []struct {
		name           string
		registry       Policy
		tool, cap, rsk string
		core, global   ApprovalConfig
		want           Policy
	}{
		{"no config keeps registry", Prompt, "write_file", "fs.write", "medium", none, none, Prompt},
		{"core auto never loosens prompt", Prompt, "terminal", "terminal.exec", "high",
			ApprovalConfig{Default: "auto", Tools: map[string]string{"terminal": "auto"}}, none, Prompt},
		{"global auto never loosens deny", Deny, "t", "", "low", none, ApprovalConfig{Default: "auto"}, Deny},
		{"core tightens auto to prompt by tool", Auto, "tools_list", "", "low",
			ApprovalConfig{Tools: map[string]string{"tools_list": "prompt"}}, none, Prompt},
		{"global tightens by risk", Auto, "read_file", "fs.read", "critical",
			none, ApprovalConfig{Risks: map[string]string{"critical": "deny"}}, Deny},
		{"capability key applies", Auto, "patch", "fs.write", "medium",
			ApprovalConfig{Capabilities: map[string]string{"fs.write": "prompt"}}, none, Prompt},
		{"tool.call:<name> key applies", Auto, "todo", "", "low",
			ApprovalConfig{Capabilities: map[string]string{"tool.call:todo": "deny"}}, none, Deny},
		{"both capability keys fold, stricter wins", Auto, "evolve", "fs.write", "high",
			ApprovalConfig{Capabilities: map[string]string{"fs.write": "prompt", "tool.call:evolve": "deny"}}, none, Deny},
		// Within one config the first match wins per capability: tools[name]
		// shadows risks for both caps, so only prompt is folded in from core.
		{"select is first-match within a config", Auto, "t", "c", "critical",
			ApprovalConfig{Tools: map[string]string{"t": "prompt"}, Risks: map[string]string{"critical": "deny"}}, none, Prompt},
		{"core and global both fold", Auto, "t", "c", "low",
			ApprovalConfig{Default: "prompt"}, ApprovalConfig{Default: "deny"}, Deny},
		{"global default prompt tightens auto", Auto, "todo", "", "low", none, ApprovalConfig{Default: "prompt"}, Prompt},
		{"invalid config value folds as deny", Auto, "t", "", "low", ApprovalConfig{Default: "sometimes"}, none, Deny},
		{"invalid registry folds as deny", "", "t", "", "low", none, none, Deny},
		{"capability equal to tool.call key counted once", Auto, "evolve_core", "tool.call:evolve_core", "high",
			ApprovalConfig{Capabilities: map[string]string{"tool.call:evolve_core": "prompt"}}, none, Prompt},
	}
	for _, tt := range tests {
		if got := Fold(tt.registry, tt.tool, tt.cap, tt.rsk, tt.core, tt.global); got != tt.want {
			t.Errorf("%s: Fold=%q, want %q", tt.name, got, tt.want)
		}
	}
}

// Folding is monotonic: whatever the configs say, the result is never looser
// than the registry policy.
func TestFoldNeverLoosens(t *testing.T) {
	values := []string{"", "auto", "prompt", "deny"}
	for _, reg := range []Policy{Auto, Prompt, Deny} {
		for _, d := range values {
			for _, tv := range values {
				for _, cv := range values {
					core := ApprovalConfig{Default: d, Tools: map[string]string{"t": tv}}
					global := ApprovalConfig{Capabilities: map[string]string{"c": cv}}
					got := Fold(reg, "t", "c", "low", core, global)
					if Stricter(got, reg) != got {
						t.Fatalf("Fold(%q) with default=%q tool=%q cap=%q = %q: looser than registry", reg, d, tv, cv, got)
					}
				}
			}
		}
	}
}

func TestApprovalConfigValidate(t *testing.T) {
	tests := []struct {
		name    string
		cfg     ApprovalConfig
		wantErr string
	}{
		{"empty", ApprovalConfig{}, ""},
		{"valid", ApprovalConfig{Default: "prompt", Tools: map[string]string{"terminal": "deny"}, Risks: map[string]string{"critical": "deny"}}, ""},
		{"bad default", ApprovalConfig{Default: "maybe"}, "approval.default: invalid approval policy: maybe"},
		{"bad tool", ApprovalConfig{Tools: map[string]string{"a": "auto", "terminal": "ask"}}, "approval.tools.terminal: invalid approval policy: ask"},
		{"bad capability", ApprovalConfig{Capabilities: map[string]string{"fs.write": "yes"}}, "approval.capabilities.fs.write: invalid approval policy: yes"},
		{"bad risk key", ApprovalConfig{Risks: map[string]string{"severe": "deny"}}, "approval.risks: invalid tool risk: severe"},
	}
	for _, tt := range tests {
		err := tt.cfg.Validate()
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("%s: unexpected error %v", tt.name, err)
		case tt.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.wantErr)):
			t.Errorf("%s: err=%v, want prefix %q", tt.name, err, tt.wantErr)
		case err != nil && demiurge.ErrorCode(err) != demiurge.ECONFIG:
			t.Errorf("%s: code=%q", tt.name, demiurge.ErrorCode(err))
		}
	}
}

func TestTightenBuiltin(t *testing.T) {
	s := func(v string) *string { return &v }
	f := false
	base := EntryPolicy{Risk: RiskMedium, Capability: "fs.write", ApprovalPolicy: Prompt, ModelOutputPolicy: "content", DisplayPolicy: "summary", Enabled: true}
	tests := []struct {
		name string
		o    Override
		want EntryPolicy
	}{
		{"empty override", Override{}, base},
		{"risk raised", Override{Risk: s("high")}, with(base, func(e *EntryPolicy) { e.Risk = RiskHigh })},
		{"risk lowering ignored", Override{Risk: s("low")}, base},
		{"risk equal kept", Override{Risk: s("medium")}, base},
		{"invalid risk is critical", Override{Risk: s("huge")}, with(base, func(e *EntryPolicy) { e.Risk = RiskCritical })},
		{"policy raised", Override{ApprovalPolicy: s("deny")}, with(base, func(e *EntryPolicy) { e.ApprovalPolicy = Deny })},
		{"policy lowering ignored", Override{ApprovalPolicy: s("auto")}, base},
		{"invalid policy is deny", Override{ApprovalPolicy: s("never")}, with(base, func(e *EntryPolicy) { e.ApprovalPolicy = Deny })},
		{"capability replaced", Override{Capability: s("fs.admin")}, with(base, func(e *EntryPolicy) { e.Capability = "fs.admin" })},
		{"capability never removed", Override{Capability: s("")}, base},
		{"display hints applied", Override{ModelOutputPolicy: s("current_turn"), DisplayPolicy: s("full")},
			with(base, func(e *EntryPolicy) { e.ModelOutputPolicy, e.DisplayPolicy = "current_turn", "full" })},
		{"disable applied", Override{Enabled: &f}, with(base, func(e *EntryPolicy) { e.Enabled = false })},
	}
	for _, tt := range tests {
		if got := TightenBuiltin(base, tt.o); got != tt.want {
			t.Errorf("%s: got %+v, want %+v", tt.name, got, tt.want)
		}
	}
	if err := (Override{Risk: s("huge")}).Validate("terminal"); err == nil || !strings.HasPrefix(err.Error(), "tools.metadata.terminal.risk: invalid tool risk: huge") {
		t.Errorf("Validate risk err=%v", err)
	}
	if err := (Override{ApprovalPolicy: s("ask")}).Validate("terminal"); err == nil || !strings.HasPrefix(err.Error(), "tools.metadata.terminal.approval_policy: invalid approval policy: ask") {
		t.Errorf("Validate policy err=%v", err)
	}
	if err := (Override{Risk: s("high"), ApprovalPolicy: s("deny")}).Validate("terminal"); err != nil {
		t.Errorf("Validate valid override: %v", err)
	}
}

func with(e EntryPolicy, f func(*EntryPolicy)) EntryPolicy {
	f(&e)
	return e
}

func TestGrantsFingerprint(t *testing.T) {
	a := NewGrants([]string{"fs.read", "fs.write"}, map[string][]string{"agent/x": {"b", "a"}, "agent/y": {"c"}})
	b := NewGrants([]string{"fs.write", "fs.read", " fs.read "}, map[string][]string{"agent/y": {"c"}, "agent/x": {"a", "b"}})
	if a.Fingerprint() != b.Fingerprint() {
		t.Fatal("same grants in another order must have the same fingerprint")
	}
	if len(a.Fingerprint()) != 64 {
		t.Fatalf("fingerprint %q is not hex sha256", a.Fingerprint())
	}
	for name, other := range map[string]Grants{
		"extra default":       NewGrants([]string{"fs.read", "fs.write", "terminal.exec"}, map[string][]string{"agent/x": {"a", "b"}, "agent/y": {"c"}}),
		"path grant moved":    NewGrants([]string{"fs.read", "fs.write"}, map[string][]string{"agent/x": {"a", "b", "c"}}),
		"default became path": NewGrants([]string{"fs.read"}, map[string][]string{"agent/x": {"a", "b"}, "agent/y": {"c"}, "fs.write": nil}),
		"empty":               NewGrants(nil, nil),
	} {
		if other.Fingerprint() == a.Fingerprint() {
			t.Errorf("%s: fingerprint did not change", name)
		}
	}
}
