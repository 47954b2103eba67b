// Package vocab holds the vocabularies of the o200k_base and cl100k_base
// byte-pair encodings as static tables and counts the tokens of one
// pre-tokenized piece with them.
//
// # Contract
//
// Encoding.Count(piece) is the number of tokens tiktoken's byte-pair merge
// gives piece: a piece that is a token whole is one token; otherwise its
// bytes start as one part each and the adjacent pair whose concatenation
// has the lowest rank (the leftmost of equals) merges, until no adjacent
// pair is a token. Any bytes are counted, UTF-8 or not. Splitting a text
// into pieces is the caller's job (the encoding's pre-tokenizer).
//
// # Data
//
// Each vocabulary is one embedded file (o200k_base.bin, cl100k_base.bin)
// written by the generator in ./gen from github.com/tiktoken-go/tokenizer's
// vocabularies (go generate). An embedded file is read-only data with no
// initialization code: the first count costs no map building and no heap.
// layout.go describes the file; the generator's test checks that the
// files are what it writes.
//
// # Concurrency
//
// Encodings are immutable values, safe for concurrent use.
package vocab
