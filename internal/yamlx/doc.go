// Package yamlx decodes the Host's YAML files strictly and reports every
// problem as one line that names the file, the line and the key.
//
// # Usage
//
//	var m Manifest
//	err := yamlx.DecodeStrict("agents/assistant/agent.yaml", data, &m)
//	// agents/assistant/agent.yaml:7: unknown key "toolset" in tools (expected one of: toolsets, metadata)
//
// Parse returns a Document for callers that want to decode and then check
// values themselves: Document.Line finds the line of a key path, and
// Document.Errorf renders an error at it in the same one-line shape.
//
// # Rules
//
//   - A mapping decoded into a struct accepts only the struct's YAML keys
//     (the `yaml` tag, as github.com/goccy/go-yaml reads it). A struct field
//     tagged `yamlx:"open"` accepts and drops keys its type does not declare.
//   - Duplicate keys are rejected in every mapping, including free-form ones.
//   - Scalars must have the kind of their destination: an integer field
//     rejects "1" (a string), a boolean field rejects yes/no strings.
//   - Anchors, aliases, merge keys and tags are rejected: they make a file's
//     meaning depend on text elsewhere, defeat the unknown-key check, and
//     allow expansion bombs.
//   - One document per file. Files over MaxBytes, with more than MaxKeys
//     keys or nested deeper than MaxDepth are rejected before parsing,
//     because the parser's cost grows faster than linearly in those.
//
// # Errors
//
// Every error is a *demiurge.Error with code ECONFIG whose message is one
// line: "<path>:<line>: <what>", or "<path>: <what>" when no line applies.
// Unknown and duplicate keys carry a *KeyError as the cause, so callers can
// render them differently without matching text.
//
// # Concurrency
//
// Functions are safe for concurrent use, and so are the methods of a
// Document: it is read-only after Parse (Decode works on a fresh tree).
package yamlx
