package cmdguard

// promptableSed judges the scripts of a sed command: w/W and s///w write
// files, r/R read them, e and s///e run commands. A script the guard cannot
// read is treated as running one.
func promptableSed(args []string) (string, string) {
	opts, operands := parseOpts(args, sedSpec)
	scripts := values(opts, "-e", "--expression")
	if len(scripts) == 0 && len(operands) > 0 {
		scripts = operands[:1]
	}
	var eff sedEffects
	for _, s := range scripts {
		e := analyseSed(s)
		eff.write = eff.write || e.write
		eff.read = eff.read || e.read
		eff.exec = eff.exec || e.exec
		eff.unreadable = eff.unreadable || e.unreadable
	}
	switch {
	case eff.write:
		return "sed writes output to a file", "file-write"
	case eff.read:
		return "sed reads a file from its command script", "file-read"
	case eff.exec:
		return "sed executes workspace or project code", "project-code-execution"
	case eff.unreadable:
		return "sed script could not be analysed", "project-code-execution"
	}
	return "", ""
}

type sedEffects struct {
	write, read, exec, unreadable bool
}

// analyseSed walks a sed script command by command (GNU syntax: addresses,
// "!", blocks, s and y with any delimiter, commands taking a file name or
// text up to the end of the line).
func analyseSed(s string) sedEffects {
	var e sedEffects
	i, n := 0, len(s)
	toEOL := func() {
		for i < n && s[i] != '\n' {
			i++
		}
	}
	toEnd := func() { // label or version: up to ; or newline
		for i < n && s[i] != '\n' && s[i] != ';' {
			i++
		}
	}
	spaces := func() {
		for i < n && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
	}
	for i < n {
		for i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == ';') {
			i++
		}
		if i >= n {
			break
		}
		var ok bool
		if i, ok = sedAddress(s, i, false); !ok {
			e.unreadable = true
			return e
		}
		spaces()
		if i < n && s[i] == ',' {
			i++
			spaces()
			if i, ok = sedAddress(s, i, true); !ok {
				e.unreadable = true
				return e
			}
		}
		spaces()
		for i < n && s[i] == '!' {
			i++
			spaces()
		}
		if i >= n {
			break
		}
		c := s[i]
		i++
		switch c {
		case '{', '}', '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
		case '#', 'a', 'i', 'c':
			// Text to the end of the line, with backslash continuations.
			for i < n && s[i] != '\n' {
				if s[i] == '\\' {
					i++
				}
				i++
			}
		case ':', 'b', 't', 'T', 'v':
			spaces()
			toEnd()
		case 'q', 'Q', 'l', 'L':
			spaces()
			for i < n && s[i] >= '0' && s[i] <= '9' {
				i++
			}
		case 'r', 'R':
			e.read = true
			toEOL()
		case 'w', 'W':
			e.write = true
			toEOL()
		case 'e':
			e.exec = true
			toEOL()
		case 's', 'y':
			if i >= n || s[i] == '\n' || s[i] == '\\' {
				e.unreadable = true
				return e
			}
			delim := s[i]
			i++
			for part := 0; part < 2; part++ {
				if i, ok = sedDelimited(s, i, delim); !ok {
					e.unreadable = true
					return e
				}
			}
			if c == 'y' {
				break
			}
			for i < n && s[i] != ';' && s[i] != '\n' && s[i] != '}' && s[i] != ' ' && s[i] != '\t' {
				switch s[i] {
				case 'w':
					e.write = true
					toEOL()
					continue
				case 'e':
					e.exec = true
				}
				i++
			}
		default:
			e.unreadable = true
			return e
		}
	}
	return e
}

// sedAddress skips an optional address at i: a line number (with ~step),
// $, /regex/ or \cregexc (with I/M flags); a range end may also be +N or ~N.
func sedAddress(s string, i int, rangeEnd bool) (int, bool) {
	n := len(s)
	if i >= n {
		return i, true
	}
	digits := func() {
		for i < n && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	switch c := s[i]; {
	case c >= '0' && c <= '9':
		digits()
		if i < n && s[i] == '~' {
			i++
			digits()
		}
	case c == '$':
		i++
	case rangeEnd && (c == '+' || c == '~'):
		i++
		digits()
	case c == '/' || c == '\\':
		delim := byte('/')
		if c == '\\' {
			if i+1 >= n {
				return i, false
			}
			delim = s[i+1]
			i++
		}
		var ok bool
		if i, ok = sedDelimited(s, i+1, delim); !ok {
			return i, false
		}
		for i < n && (s[i] == 'I' || s[i] == 'M') {
			i++
		}
	}
	return i, true
}

// sedDelimited skips to just after the next unescaped delim.
func sedDelimited(s string, i int, delim byte) (int, bool) {
	for i < len(s) {
		switch s[i] {
		case '\\':
			i += 2
			continue
		case delim:
			return i + 1, true
		}
		i++
	}
	return i, false
}
