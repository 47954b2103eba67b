// Package tokens counts the tokens of model requests: with the model
// family's own byte-pair encoding where one is embedded (o200k_base for the
// GPT-4o, GPT-4.1, GPT-5 and o-series families, cl100k_base for GPT-4 and
// GPT-3.5), and with a fast estimate otherwise. A Calibration corrects
// either from the input token counts a provider reports.
//
// # Usage
//
//	c := tokens.For(limits.Tokenizer) // "" → the estimate
//	n := c.Count(text)
//	n = tokens.Message(c, role, content) // with the per-message framing
//
// # Concurrency
//
// Counters and Calibrations are safe for concurrent use. The encodings'
// vocabularies are static data in the binary (tokens/internal/vocab):
// nothing is built when a counter is first used.
//
// # Failure modes
//
// None: counting never fails. Each byte of invalid UTF-8 counts as U+FFFD,
// as in github.com/tiktoken-go/tokenizer, whose counts these equal (but
// for U+007F, which that library drops and these count as a symbol, as
// OpenAI's tiktoken does).
package tokens
