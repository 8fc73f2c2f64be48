package ipc

import (
	"encoding/json"

	"github.com/astrid-go/astrid/internal/jsonscan"
)

// MemberEquals reports whether payload is a JSON object whose top-level
// member name is a string equal to want. It scans without decoding the
// payload: the daemon's socket uses it to relay to a client only the
// events of its own turn (docs/uplink.md, subscribe's match), for every
// event and every client.
func MemberEquals(payload []byte, name, want string) bool {
	equal := false
	found := false
	ok := jsonscan.ScanObject(payload, func(m jsonscan.Member) bool {
		if !m.Is(name) {
			return true
		}
		found = true
		lit := payload[m.ValStart:m.End]
		if len(lit) == 0 || lit[0] != '"' {
			return false // not a string
		}
		if s, plain := jsonscan.DecodeString(lit); plain {
			equal = s == want
		} else {
			var v string
			equal = json.Unmarshal(lit, &v) == nil && v == want
		}
		return false
	})
	return ok && found && equal
}
