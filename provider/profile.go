package provider

import (
	"sort"
	"strings"
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
	mode       string
	baseURL    string
	baseURLEnv string   // environment variable overriding baseURL ("" = none)
	keyEnv     []string // environment variables holding the key, first set wins
	model      string   // default model
	headers    map[string]string
	extraBody  func(model string) map[string]any
	// outputField is Endpoint.OutputLimitField.
	outputField string
}

// builtinProfiles are the vendors known without configuration. Base URLs may
// be replaced in config.yaml (providers.builtin.<id>.base_url).
var builtinProfiles = map[string]profile{
	"openai": {
		mode: ModeOpenAIChat, baseURL: "https://api.openai.com/v1", baseURLEnv: "OPENAI_BASE_URL",
		keyEnv: []string{"OPENAI_API_KEY"}, model: "gpt-4o-mini", outputField: "max_completion_tokens",
	},
	"anthropic": {
		mode: ModeAnthropicMessages, baseURL: "https://api.anthropic.com", baseURLEnv: "ANTHROPIC_BASE_URL",
		keyEnv: []string{"ANTHROPIC_API_KEY"}, model: "claude-sonnet-4-5",
	},
	"deepseek": {
		mode: ModeOpenAIChat, baseURL: "https://api.deepseek.com/v1",
		keyEnv: []string{"DEEPSEEK_API_KEY"}, model: "deepseek-chat", extraBody: deepseekThinking,
	},
	"moonshot": {
		mode: ModeOpenAIChat, baseURL: "https://api.moonshot.ai/v1",
		keyEnv: []string{"MOONSHOT_API_KEY"}, model: "kimi-k2-0711-preview",
	},
	"minimax": {
		mode: ModeOpenAIChat, baseURL: "https://api.minimax.io/v1",
		keyEnv: []string{"MINIMAX_API_KEY"}, model: "MiniMax-M2",
	},
	"minimax-cn": {
		mode: ModeOpenAIChat, baseURL: "https://api.minimaxi.com/v1",
		keyEnv: []string{"MINIMAX_CN_API_KEY", "MINIMAX_API_KEY"}, model: "MiniMax-M2",
	},
	"dashscope": {
		mode: ModeOpenAIChat, baseURL: "https://dashscope.aliyuncs.com/compatible-mode/v1",
		keyEnv: []string{"DASHSCOPE_API_KEY"}, model: "qwen-plus",
	},
	"zai": {
		mode: ModeOpenAIChat, baseURL: "https://api.z.ai/api/paas/v4",
		keyEnv: []string{"ZAI_API_KEY", "Z_AI_API_KEY"}, model: "glm-4.5",
	},
	"siliconflow": {
		mode: ModeOpenAIChat, baseURL: "https://api.siliconflow.cn/v1",
		keyEnv: []string{"SILICONFLOW_API_KEY"}, model: "deepseek-ai/DeepSeek-V3",
	},
	"openrouter": {
		mode: ModeOpenAIChat, baseURL: "https://openrouter.ai/api/v1",
		keyEnv: []string{"OPENROUTER_API_KEY"}, model: "openai/gpt-4o-mini",
		headers: map[string]string{"X-Title": "Demiurge"},
	},
}

// BuiltinIDs returns the ids of the builtin profiles, sorted, "fake" first.
func BuiltinIDs() []string {
	ids := make([]string, 0, len(builtinProfiles))
	for id := range builtinProfiles {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return append([]string{FakeID}, ids...)
}

// deepseekThinking turns on DeepSeek's thinking mode for the models that
// have it: deepseek-v* except deepseek-v3*, and deepseek-reasoner.
func deepseekThinking(model string) map[string]any {
	m := strings.ToLower(model)
	if m == "deepseek-reasoner" || (strings.HasPrefix(m, "deepseek-v") && !strings.HasPrefix(m, "deepseek-v3")) {
		return map[string]any{"thinking": map[string]any{"type": "enabled"}}
	}
	return nil
}
