// Package redact keeps secrets out of everything the Host writes or shows:
// it discovers secrets in values, produces redacted views of values and tool
// results for each audience, replaces exact values in streams, and wraps a
// slog.Handler. It is pure: it imports only the standard library and the
// root vocabulary, and performs no I/O of its own. The secret names and
// patterns are those of spec tool-runtime §5.2.
//
// # Discovery
//
// Discover walks a value (at most DiscoverMaxDepth container levels and
// DiscoverMaxItems entries each) and returns Secrets:
//
//   - a string under a sensitive field name (SensitiveField: normalised key
//     in the exact list, or ending in a sensitive suffix) is a secret named
//     UPPER(normalised key) with source "field:<dot.path>"; for
//     authorization fields only the credential after a scheme word;
//   - under a sensitive key holding a container, every nested string and
//     mapping key is a secret of that name and source;
//   - in every string and mapping key: URL passwords (URL_PASSWORD), long
//     URL user names (URL_USERINFO) of URLs of any scheme (postgres://,
//     redis://, mongodb+srv://, ...), credential query and fragment
//     parameters (UPPER(param), percent-decoded and raw), --token=… and
//     --token … options (COMMAND_SECRET), name=value assignments
//     (UPPER(name)), Authorization headers (AUTHORIZATION; after a scheme
//     word that is not a known one, both words), API-key headers
//     (SECRET_HEADER), quoted JSON fields with sensitive names inside text
//     (UPPER(field), source "json:<path>"), and credentials recognised by
//     shape alone (GitHub, GitLab, AWS, Slack, OpenAI, Anthropic, Google,
//     Stripe, private keys, JWTs and more: the rules of shape_rules.go,
//     derived from gitleaks; name UPPER(rule id), source "shape:<rule id>").
//
// Field names are matched without regard to case. Values shorter than
// MinSecretLen characters are not recorded: they are usually ordinary
// words, and replacing them everywhere would wreck the text. Mappings that
// already are redaction markers are skipped; a marker is exactly
// {redacted: true, name: string, source: string} with, optionally,
// fingerprint: 16 lower-case hex digits. Any other mapping, one with
// name, source and password keys say, is data and is walked.
//
// # Views
//
// A Redactor holds known secrets. Value returns a deep, bounded copy of a
// value for one View:
//
//	situation                        model       operator         event / durable                 debug
//	secret under a sensitive key     <redacted>  <redacted:NAME>  {redacted, name, source}        same + fingerprint
//	sensitive key, no known secret   <redacted>  <redacted:FIELD> {redacted, name:FIELD, source}  same
//	secret inside any other string   <redacted>  <redacted:NAME>  <redacted:NAME>                 <redacted:NAME:fp16>
//
// Mapping keys are redacted too (collisions get "#2", "#3"). Bounds per view
// (Limits) cut deep containers to "<truncated>", long containers with a
// "<truncated>": "N fields" entry or a "<truncated N items>" element, and
// long strings with "...[truncated N chars]". Redact produces all five views
// of a ToolResult at once and, on any failure, the fixed FailedResult in
// every view; the raw output is never a fallback. Error and RedactError
// render errors for a view.
//
// # Streams and logs
//
// Stream and ReplaceAll replace exact values (value → marker) in text;
// Stream does so across arbitrary write boundaries, in one pass whatever
// the number of values (a Wu–Manber block index), searching and forwarding
// each write where it lies (only the tail that may start a value is
// copied, to be held back), and Stream.Add grows its
// set while it runs (the terminal's output stage in package process
// discovers secrets line by line and adds them). NewHandler wraps a
// slog.Handler so log records are redacted with the current secrets.
//
// # Limits
//
// Only exact values are caught: a secret that is encoded, split or
// transformed (base64, hex, reversed, escaped differently) passes through
// unless discovery recognises that form too. A secret whose value contains
// marker text ("<redacted") may still appear next to a marker.
//
// # Concurrency and failure
//
// Redactor is immutable and safe for concurrent use; With returns a new
// one. Stream serialises its writes. Value and Redact never panic: a panic
// while rendering a value (in String, Error, or reported by fmt) becomes an
// error, and Redact then returns the failed result in every view.
package redact
