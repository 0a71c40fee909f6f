package mqttsn

import "bytes"

// hasWildcard reports whether a topic filter contains '+' or '#'.
func hasWildcard(f []byte) bool { return bytes.ContainsAny(f, "+#") }

// validTopicName reports whether b may name a topic for PUBLISH: not empty, no wildcard, no NUL.
func validTopicName(b []byte) bool {
	return len(b) > 0 && len(b) <= 0xFFFF && !bytes.ContainsAny(b, "+#\x00")
}

// validFilter checks MQTT's filter rules: '+' fills a whole level, '#' is the whole last level.
func validFilter(f []byte) bool {
	if len(f) == 0 || len(f) > 0xFFFF || bytes.IndexByte(f, 0) >= 0 {
		return false
	}
	for i, ch := range f {
		switch ch {
		case '+':
			if (i > 0 && f[i-1] != '/') || (i+1 < len(f) && f[i+1] != '/') {
				return false
			}
		case '#':
			if (i > 0 && f[i-1] != '/') || i+1 != len(f) {
				return false
			}
		}
	}
	return true
}

// match reports whether topic name matches filter (MQTT 3.1.1 §4.7): '+' matches one level,
// '#' the rest, and wildcards at the first level do not match names starting with '$'.
func match(filter, name string) bool {
	if len(name) > 0 && name[0] == '$' && len(filter) > 0 && (filter[0] == '+' || filter[0] == '#') {
		return false
	}
	for {
		fl, frest, fmore := cut(filter)
		if fl == "#" {
			return true
		}
		nl, nrest, nmore := cut(name)
		if fl != "+" && fl != nl {
			return false
		}
		if !fmore || !nmore {
			// "a/#" also matches "a" (the parent level)
			return fmore == nmore || (!nmore && frest == "#")
		}
		filter, name = frest, nrest
	}
}

func cut(s string) (level, rest string, more bool) {
	if i := indexByte(s, '/'); i >= 0 {
		return s[:i], s[i+1:], true
	}
	return s, "", false
}

func indexByte(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}
