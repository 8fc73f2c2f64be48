package ipc

// ValidSessionID reports whether s can name a session or a turn
// ([A-Za-z0-9_-]{1,64}, docs/agent.md): the alphabet that is safe in a KV
// key and a topic segment.
func ValidSessionID(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		b := s[i]
		if !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '-' || b == '_') {
			return false
		}
	}
	return true
}
