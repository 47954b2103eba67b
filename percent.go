package demiurge

// PercentEncode encodes every byte of s except the unreserved characters
// A-Z a-z 0-9 '_' '.' '-' '~' as %XX (uppercase hex), like Python's
// urllib.parse.quote(s, safe=""). The result never contains ':' or '/'.
func PercentEncode(s string) string {
	const hex = "0123456789ABCDEF"
	n := 0
	for i := 0; i < len(s); i++ {
		if !unreservedByte(s[i]) {
			n++
		}
	}
	if n == 0 {
		return s
	}
	out := make([]byte, 0, len(s)+2*n)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if unreservedByte(c) {
			out = append(out, c)
			continue
		}
		out = append(out, '%', hex[c>>4], hex[c&15])
	}
	return string(out)
}

func unreservedByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '_' || c == '.' || c == '-' || c == '~'
}
