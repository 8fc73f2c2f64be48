package approval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/astrid-go/astrid/ipc"
)

// MaxResourceBytes is how much of a call's arguments a question shows
// (spec §5.5 truncates a resource to 1024); past it the resource ends with
// a marker saying how much was left out.
const MaxResourceBytes = ipc.MaxApprovalResource

// maxStringBytes is how much of one string argument a question shows, so
// that a long value (a file's content) cannot push the others (its path)
// out of the resource.
const maxStringBytes = 384

// resource is what the person is shown of a call's arguments: the JSON
// compacted (object keys sorted), every string longer than maxStringBytes
// cut with a marker inside it, every control or format character escaped
// (a right-to-left override or a zero-width space in a path would make the
// text read as something it is not), and the whole cut visibly past
// MaxResourceBytes.
func resource(args json.RawMessage) string {
	shown := string(args)
	var v any
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	if dec.Decode(&v) == nil {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if enc.Encode(shorten(v)) == nil {
			shown = strings.TrimSuffix(buf.String(), "\n")
		}
	}
	return ipc.ApprovalText(shown, MaxResourceBytes)
}

// shorten cuts every string in v past maxStringBytes.
func shorten(v any) any {
	switch x := v.(type) {
	case string:
		if len(x) > maxStringBytes {
			return ipc.CutVisibly(x, maxStringBytes)
		}
	case []any:
		for i := range x {
			x[i] = shorten(x[i])
		}
	case map[string]any:
		for k, e := range x {
			x[k] = shorten(e)
		}
	}
	return v
}

// reason is the question's why: which capsule provides the tool, that it
// changes things, and that a session or always answer allows the whole
// tool, not only the call shown.
func reason(tool, capsule string, v verdict) string {
	why := "it is marked as changing things (mutable)"
	if !v.described {
		why = "it did not describe the tool, so it is treated as changing things"
	}
	return fmt.Sprintf("Capsule '%s' provides the tool %s, and %s. Approve runs this call once; "+
		"for this session or always allows every %s call of '%s' without asking.", capsule, tool, why, tool, capsule)
}
