package htmltext

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/demiurge/demiurge/builtin/internal/tool"
	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"
	xunicode "golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

// sniffBytes is how much of a body decides its type and encoding (the
// WHATWG prescan window).
const sniffBytes = 1024

// maxTitleChars bounds the page title.
const maxTitleChars = 300

// Page is the readable text of a response body.
type Page struct {
	Title, Text string
	Charset     string // the encoding the body was decoded with
	HTML        bool
	Truncated   bool // text or bytes were left unread
}

// Content is the title, a blank line and the text, cut to the text's
// character budget by Read.
func (p Page) Content() string {
	switch {
	case p.Title == "":
		return p.Text
	case p.Text == "":
		return p.Title
	}
	return p.Title + "\n\n" + p.Text
}

// Read reads at most maxBytes of body and returns at most maxChars
// characters of text: the title and visible text of an HTML document
// (text/html, application/xhtml+xml, or an untyped body that sniffs as
// HTML), the decoded body otherwise. The encoding is, in order: a byte
// order mark, the Content-Type charset, for HTML a <meta> declaration in
// the first 1024 bytes, else UTF-8; undecodable bytes become U+FFFD. It
// stops reading as soon as it has more than maxChars characters, so memory
// is bounded by maxBytes whatever the server sends.
func Read(body io.Reader, contentType string, maxChars int, maxBytes int64) (Page, error) {
	capped := &cappedReader{r: body, left: maxBytes}
	br := bufio.NewReaderSize(capped, sniffBytes)
	head, err := br.Peek(sniffBytes)
	if err != nil && err != io.EOF && !errors.Is(err, bufio.ErrBufferFull) {
		return Page{}, err
	}
	mediaType, params := parseContentType(contentType)
	p := Page{HTML: isHTML(mediaType, head)}
	enc, name, bom := pickEncoding(head, params["charset"], p.HTML)
	p.Charset = name
	if _, err := br.Discard(bom); err != nil {
		return Page{}, err
	}
	decoded := transform.NewReader(br, enc.NewDecoder())
	if p.HTML {
		p.Title, p.Text, p.Truncated, err = htmlText(decoded, maxChars, 4*maxBytes)
	} else {
		p.Text, p.Truncated, err = plainText(decoded, maxChars)
	}
	if err != nil {
		return Page{}, err
	}
	if n := utf8.RuneCountInString(p.Content()); n > maxChars {
		// The title shares the budget with the text.
		keep := max(maxChars-utf8.RuneCountInString(p.Title)-2, 0)
		p.Text = tool.FirstChars(p.Text, keep)
		if keep == 0 {
			p.Title, p.Text = tool.FirstChars(p.Title, maxChars), ""
		}
		p.Truncated = true
	}
	p.Truncated = p.Truncated || capped.capped
	return p, nil
}

// cappedReader reads at most left bytes of r. capped records that more
// was asked for once the budget was spent (the body may hold exactly the
// budget; it is then reported as cut, which errs on the safe side).
type cappedReader struct {
	r      io.Reader
	left   int64
	capped bool
}

func (c *cappedReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		c.capped = true
		return 0, io.EOF
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// parseContentType returns the media type and parameters of a
// Content-Type header, leniently: a malformed header still yields its
// media type and a charset parameter if one is visible.
func parseContentType(ct string) (string, map[string]string) {
	if mt, params, err := mime.ParseMediaType(ct); err == nil {
		return mt, params
	}
	mt, rest, _ := strings.Cut(ct, ";")
	params := map[string]string{}
	if _, cs, ok := strings.Cut(strings.ToLower(rest), "charset="); ok {
		cs, _, _ = strings.Cut(cs, ";")
		params["charset"] = strings.Trim(strings.TrimSpace(cs), `"'`)
	}
	return strings.ToLower(strings.TrimSpace(mt)), params
}

func isHTML(mediaType string, head []byte) bool {
	switch mediaType {
	case "text/html", "application/xhtml+xml":
		return true
	case "":
		return strings.HasPrefix(http.DetectContentType(head), "text/html")
	}
	return false
}

// pickEncoding chooses the decoder for a body whose first bytes are head.
// bom is the length of a byte order mark to skip.
func pickEncoding(head []byte, declared string, htmlBody bool) (enc encoding.Encoding, name string, bom int) {
	switch {
	case bytes.HasPrefix(head, []byte{0xEF, 0xBB, 0xBF}):
		return xunicode.UTF8, "utf-8", 3
	case bytes.HasPrefix(head, []byte{0xFE, 0xFF}):
		return xunicode.UTF16(xunicode.BigEndian, xunicode.IgnoreBOM), "utf-16be", 2
	case bytes.HasPrefix(head, []byte{0xFF, 0xFE}):
		return xunicode.UTF16(xunicode.LittleEndian, xunicode.IgnoreBOM), "utf-16le", 2
	}
	if e, n := lookupCharset(declared); e != nil {
		return e, n, 0
	}
	if htmlBody {
		// A <meta> declaration is itself ASCII, so it cannot truthfully
		// announce UTF-16 (WHATWG encoding sniffing): read such a page as
		// UTF-8.
		if e, n := lookupCharset(metaCharset(head)); e != nil && !strings.HasPrefix(n, "utf-16") {
			return e, n, 0
		}
	}
	return xunicode.UTF8, "utf-8", 0
}

// lookupCharset resolves a WHATWG encoding label; UTF-8 decodes with
// replacement of invalid bytes. An unknown label gives nil.
func lookupCharset(label string) (encoding.Encoding, string) {
	label = strings.TrimSpace(label)
	if label == "" {
		return nil, ""
	}
	e, name := charset.Lookup(label)
	if e == nil {
		return nil, ""
	}
	if name == "utf-8" {
		return xunicode.UTF8, name
	}
	return e, name
}

// metaCharset returns the charset a <meta charset> or <meta
// http-equiv="content-type"> element in head declares, or "".
func metaCharset(head []byte) string {
	z := html.NewTokenizer(bytes.NewReader(head))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return ""
		case html.StartTagToken, html.SelfClosingTagToken:
			name, more := z.TagName()
			if string(name) != "meta" {
				continue
			}
			var cs, equiv, content string
			for more {
				var k, v []byte
				k, v, more = z.TagAttr()
				switch string(k) {
				case "charset":
					cs = string(v)
				case "http-equiv":
					equiv = strings.ToLower(string(v))
				case "content":
					content = string(v)
				}
			}
			if cs != "" {
				return cs
			}
			if equiv == "content-type" {
				if _, params := parseContentType(content); params["charset"] != "" {
					return params["charset"]
				}
			}
		}
	}
}

// plainText returns the first maxChars characters of r, and whether more
// followed.
func plainText(r io.Reader, maxChars int) (string, bool, error) {
	br := bufio.NewReader(r)
	var b strings.Builder
	for n := 0; ; n++ {
		c, _, err := br.ReadRune()
		if err == io.EOF {
			return b.String(), false, nil
		}
		if err != nil {
			return "", false, err
		}
		if n == maxChars {
			return b.String(), true, nil
		}
		b.WriteRune(c)
	}
}

// Elements whose content is not readable text: code, styling, embedded
// documents and graphics, form choices, and fallback content.
var skippedElements = map[string]bool{
	"script": true, "style": true, "noscript": true, "template": true, "svg": true, "math": true,
	"canvas": true, "iframe": true, "object": true, "embed": true, "select": true,
	"audio": true, "video": true,
}

// Block elements end a line before and after; paragraph-like ones leave a
// blank line.
var blockBreaks = map[string]int{
	"p": 2, "h1": 2, "h2": 2, "h3": 2, "h4": 2, "h5": 2, "h6": 2, "blockquote": 2, "pre": 2,
	"table": 2, "ul": 2, "ol": 2, "dl": 2, "figure": 2, "hr": 2,
	"div": 1, "li": 1, "tr": 1, "dt": 1, "dd": 1, "section": 1, "article": 1, "header": 1,
	"footer": 1, "nav": 1, "aside": 1, "main": 1, "form": 1, "fieldset": 1, "address": 1,
	"details": 1, "summary": 1, "caption": 1, "figcaption": 1, "legend": 1, "body": 1, "br": 1,
}

// htmlText returns the title and the visible text of an HTML document, at
// most maxChars characters of text, and whether text was left out. White
// space collapses as a browser renders it (kept inside <pre>), blocks
// break lines, list items get "- ". A single token larger than maxBuf
// ends the text there.
func htmlText(r io.Reader, maxChars int, maxBuf int64) (title, text string, truncated bool, err error) {
	z := html.NewTokenizer(r)
	z.SetMaxBuf(int(maxBuf))
	s := textSink{limit: maxChars}
	var (
		skip      string // element whose content is being skipped
		skipDepth int    // nesting of skip inside itself
		pre       int    // open <pre> elements
		inTitle   bool
		titleSeen bool
		tb        strings.Builder
	)
	for !s.full {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			switch {
			case z.Err() == io.EOF:
				return collapse(tb.String(), maxTitleChars), s.b.String(), false, nil
			case errors.Is(z.Err(), html.ErrBufferExceeded):
				return collapse(tb.String(), maxTitleChars), s.b.String(), true, nil
			}
			return "", "", false, z.Err()
		case html.TextToken:
			switch {
			case skip != "":
			case inTitle:
				if tb.Len() < 4*maxTitleChars {
					tb.Write(z.Text())
				}
			default:
				s.write(string(z.Text()), pre > 0)
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			raw, _ := z.TagName()
			name := string(raw)
			if skip != "" {
				if name == skip && tt == html.StartTagToken {
					skipDepth++
				}
				continue
			}
			switch {
			case name == "title" && tt == html.StartTagToken:
				if titleSeen {
					skip, skipDepth = name, 1
				} else {
					inTitle, titleSeen = true, true
				}
			case skippedElements[name] && tt == html.StartTagToken:
				skip, skipDepth = name, 1
			case name == "pre":
				s.owe(2)
				if tt == html.StartTagToken {
					pre++
				}
			case name == "li":
				s.owe(1)
				s.bullet = true
			case name == "td" || name == "th":
				s.gap()
			default:
				if n, ok := blockBreaks[name]; ok {
					s.owe(n)
				}
			}
		case html.EndTagToken:
			raw, _ := z.TagName()
			name := string(raw)
			if skip != "" {
				if name == skip {
					if skipDepth--; skipDepth == 0 {
						skip = ""
					}
				}
				continue
			}
			switch {
			case name == "title":
				inTitle = false
			case name == "pre":
				pre = max(pre-1, 0)
				s.owe(2)
			case name == "td" || name == "th":
				s.gap()
			default:
				if n, ok := blockBreaks[name]; ok {
					s.owe(n)
				}
			}
		}
	}
	return collapse(tb.String(), maxTitleChars), s.b.String(), true, nil
}

// textSink accumulates rendered text up to limit characters. White space
// and line breaks are owed, and written only before the next visible
// character, so the text never starts or ends with them.
type textSink struct {
	b      strings.Builder
	n      int
	limit  int
	full   bool // a character beyond limit was offered
	space  bool // a space is owed
	breaks int  // line breaks owed (they absorb an owed space)
	bullet bool // "- " is owed at the start of the next text
}

func (s *textSink) owe(breaks int) { s.breaks = max(s.breaks, breaks) }

func (s *textSink) gap() { s.space = true }

func (s *textSink) write(text string, pre bool) {
	for _, r := range text {
		switch {
		case s.full:
			return
		case pre && r == '\r':
		case pre && r == '\n':
			s.flush()
			s.put('\n')
		case !pre && unicode.IsSpace(r):
			s.space = true
		default:
			s.flush()
			s.put(r)
		}
	}
}

// flush writes what is owed before a visible character.
func (s *textSink) flush() {
	if s.n > 0 {
		if s.breaks > 0 {
			for range s.breaks {
				s.put('\n')
			}
		} else if s.space {
			s.put(' ')
		}
	}
	if s.bullet {
		s.put('-')
		s.put(' ')
	}
	s.breaks, s.space, s.bullet = 0, false, false
}

func (s *textSink) put(r rune) {
	if s.n >= s.limit {
		s.full = true
		return
	}
	s.b.WriteRune(r)
	s.n++
}

// collapse joins the words of s with single spaces and cuts the result to
// limit characters.
func collapse(s string, limit int) string {
	return tool.FirstChars(strings.Join(strings.Fields(s), " "), limit)
}
