package gate

// maxPrincipalBytes and the character set follow upstream's principal id
// rule (DESIGN §4a): [A-Za-z0-9_-]{1,64}. The rule also keeps "." and ".."
// out, so a principal can never name a directory other than its own home.
const maxPrincipalBytes = 64

func validPrincipal(p string) bool {
	if p == "" || len(p) > maxPrincipalBytes {
		return false
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
		if !ok {
			return false
		}
	}
	return true
}
