// Package htmltext turns a response body into readable text: the title
// and visible text of an HTML document (golang.org/x/net/html's
// tokenizer, the encoding sniffed as WHATWG prescribes), or the decoded
// body of any other type, bounded in bytes read and characters kept.
package htmltext
