package provider

import (
	"maps"
	"slices"
	"strings"
	"sync"
)

// API modes: the wire protocol a profile speaks.
const (
	ModeOpenAIChat        = "openai-chat"
	ModeAnthropicMessages = "anthropic-messages"
	ModeFake              = "fake"
)

// FakeID is the id of the offline provider, and FakeModel its default model.
const (
	FakeID    = "fake"
	FakeModel = "fake/demo"
)

// profile is a builtin provider profile.
type profile struct {
	id         string
	display    string
	mode       string
	baseURL    string
	baseURLEnv string // environment variable overriding baseURL ("" = none)
	// keyEnv are the variables holding the key, in the order they are
	// read: the first is the vendor's own name (setup writes it), the
	// others are alternates its tools use.
	keyEnv []string
	// bearerEnv are the alternates of keyEnv whose value is an OAuth-style
	// token sent as "Authorization: Bearer" rather than as an API key.
	bearerEnv []string
	model     string // suggested model ("": none, the core must name one)
	headers   map[string]string
	extraBody func(model string) map[string]any
	// maxTokens is the vendor's default output limit ("": the family's).
	maxTokens int
	// outputField is Endpoint.OutputLimitField.
	outputField string
}

// builtinProfiles are the vendors known without configuration, in the
// order of spec surfaces §5.2 (setup lists them so). Base URLs may be
// replaced in config.yaml (providers.builtin.<id>.base_url). Built on
// first use, so a process that never resolves a provider pays nothing.
var builtinProfiles = sync.OnceValue(func() []profile {
	return []profile{
		{id: "openai", display: "OpenAI", mode: ModeOpenAIChat, baseURL: "https://api.openai.com/v1", baseURLEnv: "OPENAI_BASE_URL",
			keyEnv: []string{"OPENAI_API_KEY"}, model: "gpt-5.5", outputField: "max_completion_tokens"},
		// The Anthropic SDKs' convention: the base is the host, the
		// client adds /v1/messages (a base with a path gets /messages).
		{id: "anthropic", display: "Anthropic", mode: ModeAnthropicMessages, baseURL: "https://api.anthropic.com", baseURLEnv: "ANTHROPIC_BASE_URL",
			keyEnv:    []string{"ANTHROPIC_API_KEY", "ANTHROPIC_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"},
			bearerEnv: []string{"ANTHROPIC_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"}, model: "claude-sonnet-4-5"},
		{id: "deepseek", display: "DeepSeek", mode: ModeOpenAIChat, baseURL: "https://api.deepseek.com/v1",
			keyEnv: []string{"DEEPSEEK_API_KEY"}, model: "deepseek-v4-pro", extraBody: deepseekThinking},
		{id: "moonshot", display: "Kimi/Moonshot", mode: ModeOpenAIChat, baseURL: "https://api.moonshot.ai/v1",
			keyEnv: []string{"KIMI_API_KEY", "KIMI_CODING_API_KEY"}, model: "kimi-k2.7-code",
			headers: map[string]string{"User-Agent": "demiurge-agent"}, maxTokens: 32000},
		{id: "minimax", display: "MiniMax", mode: ModeAnthropicMessages, baseURL: "https://api.minimax.io/anthropic",
			keyEnv: []string{"MINIMAX_API_KEY"}, model: "MiniMax-M3"},
		{id: "minimax-cn", display: "MiniMax-CN", mode: ModeAnthropicMessages, baseURL: "https://api.minimaxi.com/anthropic",
			keyEnv: []string{"MINIMAX_CN_API_KEY"}, model: "MiniMax-M3"},
		{id: "dashscope", display: "Alibaba DashScope/百炼", mode: ModeOpenAIChat, baseURL: "https://dashscope.aliyuncs.com/compatible-mode/v1",
			keyEnv: []string{"DASHSCOPE_API_KEY"}, model: "qwen3.7-max"},
		{id: "zai", display: "Zhipu/Z.ai", mode: ModeOpenAIChat, baseURL: "https://api.z.ai/api/paas/v4",
			keyEnv: []string{"ZAI_API_KEY", "GLM_API_KEY", "Z_AI_API_KEY"}, model: "glm-5.2"},
		{id: "siliconflow", display: "SiliconFlow", mode: ModeOpenAIChat, baseURL: "https://api.siliconflow.cn/v1",
			keyEnv: []string{"SILICONFLOW_API_KEY"}},
		{id: "openrouter", display: "OpenRouter", mode: ModeOpenAIChat, baseURL: "https://openrouter.ai/api/v1",
			keyEnv: []string{"OPENROUTER_API_KEY"}, model: "openai/gpt-5.5"},
	}
})

// builtinProfile returns the builtin profile id.
func builtinProfile(id string) (profile, bool) {
	for _, p := range builtinProfiles() {
		if p.id == id {
			return p, true
		}
	}
	return profile{}, false
}

// IsBuiltin reports whether id names a builtin profile (not fake).
func IsBuiltin(id string) bool {
	_, ok := builtinProfile(id)
	return ok
}

// BuiltinIDs returns the ids of the builtin profiles, sorted, "fake" first.
func BuiltinIDs() []string {
	ids := make([]string, 0, len(builtinProfiles()))
	for _, p := range builtinProfiles() {
		ids = append(ids, p.id)
	}
	slices.Sort(ids)
	return append([]string{FakeID}, ids...)
}

// Preset describes a builtin profile for setup and status output.
type Preset struct {
	ID          string            `json:"id"`
	Display     string            `json:"display"`
	APIMode     string            `json:"api_mode"`
	BaseURL     string            `json:"base_url"`
	BaseURLEnv  string            `json:"base_url_env,omitempty"`
	KeyEnv      []string          `json:"api_key_env"`
	Model       string            `json:"suggested_model,omitempty"`
	Headers     map[string]string `json:"headers,omitempty"`
	MaxTokens   int               `json:"max_tokens,omitempty"`
	OutputField string            `json:"-"`
}

// Presets returns the builtin profiles in the table order of spec
// surfaces §5.2.
func Presets() []Preset {
	out := make([]Preset, 0, len(builtinProfiles()))
	for _, p := range builtinProfiles() {
		out = append(out, p.preset())
	}
	return out
}

// LookupPreset returns the builtin profile id.
func LookupPreset(id string) (Preset, bool) {
	p, ok := builtinProfile(id)
	return p.preset(), ok
}

func (p profile) preset() Preset {
	return Preset{ID: p.id, Display: p.display, APIMode: p.mode, BaseURL: p.baseURL, BaseURLEnv: p.baseURLEnv,
		KeyEnv: slices.Clone(p.keyEnv), Model: p.model, Headers: maps.Clone(p.headers), MaxTokens: p.maxTokens, OutputField: p.outputField}
}

// NormalizeID is the spec's normalisation of a provider reference (a
// command-line id, agent.yaml model.provider): trimmed, lower-cased, "_"
// as "-".
func NormalizeID(id string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimSpace(id)), "_", "-")
}

// deepseekThinking turns on DeepSeek's thinking mode for the models that
// have it: deepseek-v* except deepseek-v3*, and deepseek-reasoner.
func deepseekThinking(model string) map[string]any {
	m := strings.ToLower(strings.TrimSpace(model))
	if m == "deepseek-reasoner" || (strings.HasPrefix(m, "deepseek-v") && !strings.HasPrefix(m, "deepseek-v3")) {
		return map[string]any{"thinking": map[string]any{"type": "enabled"}}
	}
	return nil
}
