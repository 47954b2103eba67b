package yamlx

import (
	"unicode/utf8"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/token"
)

// precheck rejects, before the parser sees them, inputs whose parse cost is
// not linear (deep flow nesting, long runs of compact "- - -" entries, very
// many keys) and features the package does not accept. The lexer is linear;
// its tokens are returned for the parser, so a file is lexed once.
func precheck(data []byte) (token.Tokens, *posError) {
	if len(data) > MaxBytes {
		return nil, atLine(0, "file is %d bytes; the limit is %d", len(data), MaxBytes)
	}
	if !utf8.Valid(data) {
		line := 1
		for i := 0; i < len(data); {
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size <= 1 {
				break
			}
			if r == '\n' {
				line++
			}
			i += size
		}
		return nil, atLine(line, "file is not valid UTF-8 text")
	}
	flow, keys := 0, 0
	compactLine, compact := -1, 0
	tokens := lexer.Tokenize(string(data))
	for _, tk := range tokens {
		line := 0
		if tk.Position != nil {
			line = tk.Position.Line
		}
		switch tk.Type {
		case token.SequenceStartType, token.MappingStartType:
			flow++
			if flow > MaxDepth {
				return nil, atLine(line, "flow collections nested deeper than %d levels", MaxDepth)
			}
		case token.SequenceEndType, token.MappingEndType:
			if flow > 0 {
				flow--
			}
		case token.SequenceEntryType, token.MappingKeyType:
			if line != compactLine {
				compactLine, compact = line, 0
			}
			compact++
			if compact > MaxDepth {
				return nil, atLine(line, "more than %d nested entries on one line", MaxDepth)
			}
		case token.MappingValueType:
			keys++
			if keys > MaxKeys {
				return nil, atLine(line, "more than %d mapping keys in one file", MaxKeys)
			}
		case token.AnchorType, token.AliasType:
			return nil, atLine(line, "YAML anchors and aliases are not supported")
		case token.MergeKeyType:
			return nil, atLine(line, "YAML merge keys (<<) are not supported")
		case token.TagType:
			return nil, atLine(line, "YAML tags are not supported (%s)", tk.Value)
		}
	}
	return tokens, nil
}

// checkTree walks the whole tree for what precheck cannot see from tokens:
// duplicate keys (the parser runs with duplicates allowed, so that they are
// reported here with their mapping's path) and keys that are not scalars.
func checkTree(n ast.Node, path string, depth int) *posError {
	if depth > 4*MaxDepth {
		return atLine(nodeLine(n), "YAML nested deeper than %d levels", 4*MaxDepth)
	}
	switch n := n.(type) {
	case nil:
		return nil
	case *ast.TagNode:
		return atLine(nodeLine(n), "YAML tags are not supported")
	case *ast.AnchorNode, *ast.AliasNode:
		return atLine(nodeLine(n), "YAML anchors and aliases are not supported")
	case *ast.MappingNode, *ast.MappingValueNode:
		first := map[string]int{}
		for _, mv := range mappingValues(n) {
			key, ok := keyString(mv.Key)
			if !ok {
				return atLine(nodeLine(mv.Key), "mapping key%s must be a plain value, not a collection", in(path))
			}
			line := nodeLine(mv.Key)
			if prev, dup := first[key]; dup {
				return keyError(&KeyError{Line: line, Parent: path, Key: key, Duplicate: true, FirstLine: prev})
			}
			first[key] = line
			if pe := checkTree(mv.Value, join(path, key), depth+1); pe != nil {
				return pe
			}
		}
	case *ast.SequenceNode:
		for i, item := range n.Values {
			if pe := checkTree(item, index(path, i), depth+1); pe != nil {
				return pe
			}
		}
	}
	return nil
}

func in(path string) string {
	if path == "" {
		return ""
	}
	return " in " + path
}
