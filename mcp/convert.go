package mcp

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/redact"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxResultChars bounds the text of one tool result; structured content
// whose JSON is longer is left out of the result's data.
const MaxResultChars = 64 << 10

// convertResult turns a tools/call result into an outcome: structured
// content as indented JSON, otherwise the
// content blocks' text joined by newlines, with images, audio and
// resources as placeholders (their bytes never reach the model), and a
// small status object when the server returned nothing. Values of the
// server's own env and header secrets are replaced before the effect
// runtime redacts the views.
func convertResult(res *sdk.CallToolResult, server, tool string, red *redact.Redactor) effect.Outcome {
	data := map[string]any{"mcpServer": server, "mcpTool": tool}
	if res.IsError {
		data["status"] = "error"
	}
	var text string
	structured := false
	if res.StructuredContent != nil {
		if b, err := json.MarshalIndent(res.StructuredContent, "", "  "); err == nil {
			text, structured = string(b), true
			if len(b) <= MaxResultChars*utf8.UTFMax {
				var v any
				if json.Unmarshal(b, &v) == nil {
					data["structuredContent"] = redactValue(v, red)
				}
			}
		}
	}
	if !structured {
		parts := make([]string, 0, len(res.Content))
		for _, c := range res.Content {
			parts = append(parts, blockText(c))
		}
		text = strings.Join(parts, "\n")
	}
	if text == "" {
		status := "ok"
		if res.IsError {
			status = "error"
		}
		b, _ := json.Marshal(map[string]any{"status": status, "mcpServer": server, "mcpTool": tool})
		text = string(b)
	}
	text = bound(red.String(text, redact.Operator), MaxResultChars)
	out := effect.Outcome{Content: text, Data: data, IsError: res.IsError, ExecutionStarted: true}
	if structured {
		out.ModelOutput = text
	}
	return out
}

// blockText renders one content block.
func blockText(c sdk.Content) string {
	switch b := c.(type) {
	case *sdk.TextContent:
		return b.Text
	case *sdk.ImageContent:
		return "[image " + b.MIMEType + "]"
	case *sdk.AudioContent:
		return "[audio " + b.MIMEType + "]"
	case *sdk.ResourceLink:
		title := cmp.Or(b.Title, b.Name)
		if title != "" {
			return "[" + title + "] " + b.URI
		}
		return b.URI
	case *sdk.EmbeddedResource:
		if b.Resource == nil {
			return ""
		}
		if b.Resource.Text != "" {
			return b.Resource.Text
		}
		return b.Resource.URI
	case nil:
		return ""
	default:
		raw, err := json.Marshal(c)
		if err != nil {
			return fmt.Sprintf("[%T]", c)
		}
		return string(raw)
	}
}

// bound cuts s to limit characters with a note of how much was left out.
func bound(s string, limit int) string {
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	r := []rune(s)
	return string(r[:limit]) + fmt.Sprintf("\n...[truncated: %d more characters]", len(r)-limit)
}

// redactValue replaces the server's secrets in a decoded JSON value; a
// value that cannot be walked is dropped rather than kept raw.
func redactValue(v any, red *redact.Redactor) any {
	if red == nil || len(red.Secrets()) == 0 {
		return v
	}
	out, err := red.RedactValue(v, redact.Operator)
	if err != nil {
		return nil
	}
	return out
}
