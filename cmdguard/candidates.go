package cmdguard

import (
	"regexp"
	"strings"
	"sync"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// candidate is one form of the command under review.
type candidate struct {
	name string
	text string
}

// ansiRe matches an ESC-introduced Fe sequence or a CSI sequence.
var ansiRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\x1b(?:[@-Z\\-_]|\[[0-?]*[ -/]*[@-~])`) })

// candidates returns the forms of command that are reviewed, trimmed,
// de-duplicated, in order: (a) the command with backslash-newline line
// continuations removed (what the shell executes); (b) the same with
// terminal escape sequences removed first (what an operator sees); (c) (b)
// under NFKC with confusable characters folded to their ASCII look-alikes
// and invisible characters removed (what a reader takes it for). None is
// returned for a blank command.
func candidates(command string) []candidate {
	raw := trimSpace(command)
	if raw == "" {
		return nil
	}
	a := collapseContinuations(raw)
	b := collapseContinuations(ansiRe().ReplaceAllString(raw, ""))
	c := foldConfusables(norm.NFKC.String(b))
	out := make([]candidate, 0, 3)
	add := func(name, text string) {
		text = trimSpace(text)
		if text == "" {
			return
		}
		for _, have := range out {
			if have.text == text {
				return
			}
		}
		out = append(out, candidate{name: name, text: text})
	}
	add(CandidateRaw, a)
	add(CandidateANSI, b)
	add(CandidateNormalized, c)
	return out
}

func collapseContinuations(s string) string {
	return strings.ReplaceAll(s, "\\\n", "")
}

// trimSpace trims what Python's str.strip trims: Unicode white space plus
// the ASCII separators U+001C..U+001F.
func trimSpace(s string) string {
	return strings.TrimFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
	})
}

// foldConfusables removes invisible characters and maps look-alikes of
// shell-significant ASCII (Latin letters, dashes, slashes, bars, colons,
// asterisks) to that ASCII. Quote look-alikes are deliberately not folded:
// the shell takes them literally, and turning them into quotes would only
// invent quoting the command does not have.
func foldConfusables(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	changed := false
	for _, r := range s {
		if invisible(r) {
			changed = true
			continue
		}
		if m, ok := confusables[r]; ok {
			b.WriteRune(m)
			changed = true
			continue
		}
		b.WriteRune(r)
	}
	if !changed {
		return s
	}
	return b.String()
}

// invisible reports whether r renders as nothing: format characters
// (zero-width spaces and joiners, bidi controls, soft hyphen, BOM), control
// characters other than tab and line breaks, and the blank fillers that are
// letters by category.
func invisible(r rune) bool {
	switch r {
	case 0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x3164, 0xFFA0:
		return true
	case '\t', '\n', '\r':
		return false
	}
	return unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Cc, r)
}

// confusables maps characters that read as ASCII but are not. NFKC already
// folds fullwidth forms and compatibility variants; this table covers what
// NFKC keeps distinct.
var confusables = map[rune]rune{
	// Cyrillic
	'а': 'a', 'в': 'b', 'е': 'e', 'к': 'k', 'м': 'm', 'н': 'h', 'о': 'o', 'р': 'p', 'с': 'c', 'т': 't',
	'у': 'y', 'х': 'x', 'і': 'i', 'ј': 'j', 'ѕ': 's', 'һ': 'h', 'ԁ': 'd', 'ԛ': 'q', 'ԝ': 'w', 'ӏ': 'l',
	'А': 'A', 'В': 'B', 'Е': 'E', 'К': 'K', 'М': 'M', 'Н': 'H', 'О': 'O', 'Р': 'P', 'С': 'C', 'Т': 'T',
	'У': 'Y', 'Х': 'X', 'І': 'I', 'Ј': 'J', 'Ѕ': 'S', 'Ԁ': 'D', 'Ԛ': 'Q', 'Ԝ': 'W', 'Ӏ': 'I',
	// Greek
	'α': 'a', 'ε': 'e', 'ι': 'i', 'κ': 'k', 'ν': 'v', 'ο': 'o', 'ρ': 'p', 'τ': 't', 'υ': 'u', 'χ': 'x',
	'Α': 'A', 'Β': 'B', 'Ε': 'E', 'Ζ': 'Z', 'Η': 'H', 'Ι': 'I', 'Κ': 'K', 'Μ': 'M', 'Ν': 'N', 'Ο': 'O',
	'Ρ': 'P', 'Τ': 'T', 'Υ': 'Y', 'Χ': 'X',
	// Latin look-alikes
	'ı': 'i', 'ɑ': 'a', 'ɡ': 'g', 'ʀ': 'r', 'ʏ': 'y', 'ǀ': '|',
	// Dashes and minus signs
	'\u2010': '-', '\u2011': '-', '\u2012': '-', '\u2013': '-', '\u2014': '-', '\u2015': '-',
	'\u2212': '-', '\u2796': '-', '\u02D7': '-',
	// Slashes and bars
	'\u2044': '/', '\u2215': '/', '\u29F8': '/', '\u2571': '/', '\u01C1': '|', '\u2223': '|',
	'\u23D0': '|', '\u2502': '|', '\u29F9': '\\', '\u2216': '\\',
	// Colons, semicolons, asterisks, ampersands
	'\u2236': ':', '\u0589': ':', '\u02D0': ':', '\uA789': ':', '\u037E': ';', '\u2217': '*',
	'\u204E': '*', '\u2731': '*', '\u214B': '&',
}
