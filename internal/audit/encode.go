package audit

import (
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/astrid-go/astrid/internal/jsonscan"
)

// appendBody appends e's canonical body to dst: byte for byte what
// encoding/json.Marshal makes of it (DecodeLine checks lines against
// Marshal; TestAppendBodyIsMarshal and FuzzAppendBody hold the two
// together), without reflection, since the writer encodes every entry on
// a tool call's hot path.
func appendBody(dst []byte, e *Entry) ([]byte, error) {
	if y := e.Time.Year(); y < 0 || y > 9999 {
		return dst, errors.New("time year outside of range [0,9999]")
	}
	dst = append(dst, `{"seq":`...)
	dst = strconv.AppendUint(dst, e.Seq, 10)
	dst = append(dst, `,"time":"`...)
	dst = e.Time.AppendFormat(dst, time.RFC3339Nano)
	dst = append(dst, '"')
	dst = appendField(dst, "principal", e.Principal, true)
	dst = appendField(dst, "kind", string(e.Kind), false)
	dst = appendField(dst, "capsule", e.Capsule, true)
	dst = appendField(dst, "subject", e.Subject, true)
	dst = appendField(dst, "outcome", e.Outcome, true)
	if len(e.Detail) > 0 {
		keys := make([]string, 0, len(e.Detail))
		for k := range e.Detail {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		dst = append(dst, `,"detail":{`...)
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, k)
			dst = append(dst, ':')
			dst = appendString(dst, e.Detail[k])
		}
		dst = append(dst, '}')
	}
	dst = appendField(dst, "prev", e.Prev, false)
	return append(dst, '}'), nil
}

func appendField(dst []byte, name, v string, omitEmpty bool) []byte {
	if omitEmpty && v == "" {
		return dst
	}
	dst = append(dst, ',', '"')
	dst = append(dst, name...)
	dst = append(dst, '"', ':')
	return appendString(dst, v)
}

// appendString is encoding/json's string encoding with HTML escaping (its
// default, json.Marshal's): an entry's bytes must be Marshal's.
func appendString(dst []byte, s string) []byte { return jsonscan.AppendString(dst, s, true) }
