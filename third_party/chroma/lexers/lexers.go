package lexers

import (
	"embed"
	"io/fs"
	"sync"

	"github.com/alecthomas/chroma/v2"
)

//go:embed embedded
var embedded embed.FS

// GlobalLexerRegistry is the global LexerRegistry of Lexers. The lexers
// written in Go register in it at package initialisation; the embedded XML
// lexers are added on first use (registry), so that a program linking this
// package pays nothing for them until it highlights. Code that reads the
// variable directly before any function of this package ran sees the Go
// lexers only.
var GlobalLexerRegistry = chroma.NewLexerRegistry()

var embeddedOnce sync.Once

// wrapped are the embedded lexers a Go file wraps (emacs.go, cl.go): registry
// registers what the function builds in place of the plain XML lexer.
var wrapped = map[string]func() chroma.Lexer{}

// afterEmbedded are set-ups of embedded lexers (analysers) that upstream
// ran at init; registry runs them once the embedded lexers are in.
var afterEmbedded []func(*chroma.LexerRegistry)

// registry returns GlobalLexerRegistry with the embedded lexers loaded. An
// embedded lexer never replaces one of the same name written in Go (those
// registered after the embedded ones in the eager original).
func registry() *chroma.LexerRegistry {
	embeddedOnce.Do(func() {
		paths, err := fs.Glob(embedded, "embedded/*.xml")
		if err != nil {
			panic(err)
		}
		have := map[string]bool{}
		for _, l := range GlobalLexerRegistry.Lexers {
			have[l.Config().Name] = true
		}
		for _, path := range paths {
			var l chroma.Lexer
			if wrap, ok := wrapped[path]; ok {
				l = wrap()
			} else {
				l = chroma.MustNewXMLLexer(embedded, path)
			}
			if !have[l.Config().Name] {
				GlobalLexerRegistry.Register(l)
			}
		}
		for _, f := range afterEmbedded {
			f(GlobalLexerRegistry)
		}
	})
	return GlobalLexerRegistry
}

// Names of all lexers, optionally including aliases.
func Names(withAliases bool) []string {
	return registry().Names(withAliases)
}

// Get a Lexer by name, alias or file extension.
//
// Note that this if there isn't an exact match on name or alias, this will
// call Match(), so it is not efficient.
func Get(name string) chroma.Lexer {
	return registry().Get(name)
}

// MatchMimeType attempts to find a lexer for the given MIME type.
func MatchMimeType(mimeType string) chroma.Lexer {
	return registry().MatchMimeType(mimeType)
}

// Match returns the first lexer matching filename.
//
// Note that this iterates over all file patterns in all lexers, so it's not
// particularly efficient.
func Match(filename string) chroma.Lexer {
	return registry().Match(filename)
}

// Register a Lexer with the global registry.
func Register(lexer chroma.Lexer) chroma.Lexer {
	return GlobalLexerRegistry.Register(lexer)
}

// Analyse text content and return the "best" lexer..
func Analyse(text string) chroma.Lexer {
	return registry().Analyse(text)
}

// PlaintextRules is used for the fallback lexer as well as the explicit
// plaintext lexer.
func PlaintextRules() chroma.Rules {
	return chroma.Rules{
		"root": []chroma.Rule{
			{`.+`, chroma.Text, nil},
			{`\n`, chroma.Text, nil},
		},
	}
}

// Fallback lexer if no other is found.
var Fallback chroma.Lexer = chroma.MustNewLexer(&chroma.Config{
	Name:      "fallback",
	Filenames: []string{"*"},
	Priority:  -1,
}, PlaintextRules)
