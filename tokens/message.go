package tokens

import "encoding/json"

// Framing costs, in tokens, of the chat formats: each message carries its
// role and separators, each request primes the reply, each tool its
// wrapper. They are the OpenAI figures; other protocols are within them.
const (
	PerMessage = 4
	PerRequest = 3
	PerTool    = 8
)

// Message counts one message: its content, its role and name, the JSON of
// its tool calls' arguments, and the framing.
func Message(c Counter, role, name, content string, toolCalls ...any) int {
	n := PerMessage + c.Count(role) + c.Count(content)
	if name != "" {
		n += c.Count(name) + 1
	}
	for _, tc := range toolCalls {
		b, err := json.Marshal(tc)
		if err == nil {
			n += c.Count(string(b)) + PerMessage
		}
	}
	return n
}

// Tool counts one tool definition: its name, description and JSON schema.
func Tool(c Counter, name, description string, schema map[string]any) int {
	n := PerTool + c.Count(name) + c.Count(description)
	if len(schema) > 0 {
		if b, err := json.Marshal(schema); err == nil {
			n += c.Count(string(b))
		}
	}
	return n
}
