package core

import "strings"

// The shapes of names in a core. They are checked on every load, so they
// are written as loops rather than regular expressions: a bounded
// repetition such as {0,63} compiles into one program state per repeat,
// which every process would pay for at package init.

// ValidID reports whether id is what core, slot, tool and skill ids may
// look like: a letter, digit or underscore, then up to 63 letters, digits,
// underscores or hyphens. It is also what model providers accept as a tool
// name.
func ValidID(id string) bool {
	return shaped(id, 64, isWordByte, func(c byte) bool { return isWordByte(c) || c == '-' })
}

// ValidScheduleID reports whether id is what a schedule id (the file stem)
// may look like: like ValidID, but it starts with a letter or a digit.
func ValidScheduleID(id string) bool {
	return shaped(id, 64, func(c byte) bool { return isWordByte(c) && c != '_' },
		func(c byte) bool { return isWordByte(c) || c == '-' })
}

// validPolicyWord reports whether w has the shape of a display or
// model-output policy, hints the runtime does not interpret: a lower-case
// letter, then up to 31 lower-case letters or underscores.
func validPolicyWord(w string) bool {
	lower := func(c byte) bool { return 'a' <= c && c <= 'z' }
	return shaped(w, 32, lower, func(c byte) bool { return lower(c) || c == '_' })
}

// validIdentifier reports whether s is a Python or Starlark identifier in
// ASCII: a letter or underscore, then letters, digits or underscores.
func validIdentifier(s string) bool {
	return shaped(s, len(s), func(c byte) bool { return isWordByte(c) && !isDigit(c) }, isWordByte)
}

// validModulePath reports whether s is a dotted path of identifiers.
func validModulePath(s string) bool {
	for part := range strings.SplitSeq(s, ".") {
		if !validIdentifier(part) {
			return false
		}
	}
	return true
}

// shaped reports whether s has 1 to maxLen bytes, the first accepted by
// first and every other by rest.
func shaped(s string, maxLen int, first, rest func(byte) bool) bool {
	if s == "" || len(s) > maxLen || !first(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !rest(s[i]) {
			return false
		}
	}
	return true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || isDigit(c) || c == '_'
}
