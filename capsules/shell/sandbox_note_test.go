package shell

import (
	"strings"
	"testing"

	"github.com/astrid-go/astrid/hostapi"
)

// A confined command's refusal is explained as the sandbox's, network
// failures included; an unconfined run, or a failure of another kind, gets
// no note.
func TestSandboxNote(t *testing.T) {
	box := "reads /w; writes /w and $TMPDIR; no network"
	cases := []struct {
		stderr, confined string
		want             string
	}{
		{"cat: /etc/passwd: Permission denied", box, "not a file mode"},
		{"touch: cannot touch 'x': Read-only file system", box, "not a file mode"},
		{"curl: (6) Could not resolve host: example.com", box, "not an outage"},
		{"ssh: Could not resolve hostname x: Temporary failure in name resolution", box, "not an outage"},
		{"cat: /etc/passwd: Permission denied", "", ""},
		{"go: build failed: undefined: x", box, ""},
	}
	for _, c := range cases {
		note := sandboxNote(hostapi.ProcessResult{Stderr: []byte(c.stderr), Confined: c.confined})
		switch {
		case c.want == "" && note != "":
			t.Errorf("%q (confined %q): unexpected note %q", c.stderr, c.confined, note)
		case c.want != "" && (!strings.Contains(note, c.want) || !strings.Contains(note, box)):
			t.Errorf("%q: note %q, want %q and the box", c.stderr, note, c.want)
		}
	}
}
