package ansi

import (
	"strings"

	"golang.org/x/net/html"
)

// RenderContext holds the current rendering options and state.
type RenderContext struct {
	options Options

	blockStack *BlockStack
	table      *TableElement
}

// NewRenderContext returns a new RenderContext.
func NewRenderContext(options Options) RenderContext {
	return RenderContext{
		options:    options,
		blockStack: &BlockStack{},
		table:      &TableElement{},
	}
}

// SanitizeHTML reduces HTML content to its text: tags, comments and
// doctypes are dropped, the content of elements that are never shown
// (script, style, title, frames, objects, ...) is dropped, and character
// references are decoded. It is what upstream's bluemonday StrictPolicy
// followed by html.UnescapeString produced.
func (ctx RenderContext) SanitizeHTML(s string, trimSpaces bool) string {
	var b strings.Builder
	z := html.NewTokenizer(strings.NewReader(s))
	skipping := 0
	for {
		switch z.Next() {
		case html.ErrorToken:
			out := b.String()
			if trimSpaces {
				out = strings.TrimSpace(out)
			}
			return out
		case html.StartTagToken:
			name, _ := z.TagName()
			if skipsContent(string(name)) {
				skipping++
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			if skipsContent(string(name)) && skipping > 0 {
				skipping--
			}
		case html.TextToken:
			if skipping == 0 {
				b.Write(z.Text())
			}
		}
	}
}

// skipsContent reports the elements whose content bluemonday drops
// together with the element itself.
func skipsContent(name string) bool {
	switch name {
	case "frame", "frameset", "iframe", "noembed", "noframes", "noscript",
		"nostyle", "object", "script", "style", "title":
		return true
	}
	return false
}
