package grants

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/internal/store"
	"github.com/astrid-go/astrid/manifest"
)

func parse(t *testing.T, name string, extra ...string) *manifest.Manifest {
	t.Helper()
	text := fmt.Sprintf("[package]\nname = %q\nversion = \"0.1.0\"\n", name) + strings.Join(extra, "\n") + "\n"
	m, diags := manifest.Parse([]byte(text), manifest.FileName, "")
	if err := diags.Err(false); err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	return m
}

const base = `[capabilities]
net = ["api.example.com"]
fs_read = ["cwd://"]
host_process = ["node"]
[publish]
"a.b" = "opaque"
[subscribe]
"c.d" = { wit = "opaque", handler = "h" }
"e.f" = "opaque"
[[mcp_server]]
id = "srv"
type = "stdio"
command = "node"
args = ["server.js"]
[[tool]]
name = "wipe"
description_for_llm = "wipes"
mutable = true`

// Every way an edited manifest can ask for more is caught, and named in
// the manifest's own syntax; asking for less, or for the same in another
// order, is not.
func TestBeyondCatchesEveryWidening(t *testing.T) {
	caps := func(add string) string {
		return strings.Replace(base, `fs_read = ["cwd://"]`, "fs_read = [\"cwd://\"]\n"+add, 1)
	}
	cases := []struct {
		name string
		next string
		want []string // exactly these; nil: none
	}{
		{"same", base, nil},
		{"narrower", "[capabilities]\nnet = [\"api.example.com\"]\n[publish]\n\"a.b\" = \"opaque\"\n[[tool]]\nname = \"wipe\"\ndescription_for_llm = \"w\"\nmutable = true", nil},
		{"renamed handler and priority", strings.Replace(base, `handler = "h"`, `handler = "h2", priority = 1`, 1), nil},
		{"fs_read root", strings.Replace(base, `fs_read = ["cwd://"]`, `fs_read = ["cwd://", "/"]`, 1), []string{`fs_read = ["/"]`}},
		{"fs_write", caps(`fs_write = ["*"]`), []string{`fs_write = ["*"]`}},
		{"net wildcard", strings.Replace(base, `net = ["api.example.com"]`, `net = ["api.example.com", "*"]`, 1), []string{`net = ["*"]`}},
		{"net_connect", caps(`net_connect = ["10.0.0.1:22"]`), []string{`net_connect = ["10.0.0.1:22"]`}},
		{"net_bind", caps(`net_bind = ["unix:/tmp/s"]`), []string{`net_bind = ["unix:/tmp/s"]`}},
		{"host_process", strings.Replace(base, `host_process = ["node"]`, `host_process = ["node", "sh"]`, 1), []string{`host_process = ["sh"]`}},
		{"identity", caps(`identity = ["resolve"]`), []string{`identity = ["resolve"]`}},
		{"tool_middleware", caps(`tool_middleware = true`), []string{"tool_middleware = true"}},
		{"allow_prompt_injection", caps(`allow_prompt_injection = true`), []string{"allow_prompt_injection = true"}},
		{"allow_persistent", caps(`allow_persistent = true`), []string{"allow_persistent = true"}},
		{"uplink", caps(`uplink = true`), []string{"uplink = true"}},
		{"publish wildcard", strings.Replace(base, `"a.b" = "opaque"`, `"a.b" = "opaque"`+"\n"+`"a.*" = "opaque"`, 1), []string{`[publish] "a.*"`}},
		{"subscribe", strings.Replace(base, `"e.f" = "opaque"`, `"e.f" = "opaque"`+"\n"+`"g.h" = "opaque"`, 1), []string{`[subscribe] "g.h"`}},
		{"interceptor on a subscribed pattern", strings.Replace(base, `"e.f" = "opaque"`, `"e.f" = { wit = "opaque", handler = "g" }`, 1), []string{`interceptor "e.f"`}},
		{"mcp command changed", strings.Replace(base, `args = ["server.js"]`, `args = ["evil.js"]`, 1), []string{`[[mcp_server]] "srv" runs ["node", "evil.js"]`}},
		{"tool no longer mutable", strings.Replace(base, "mutable = true", "mutable = false", 1), []string{`[[tool]] "wipe" without mutable = true`}},
		{"kv is not a grant", caps(`kv = ["anything"]`), nil},
	}
	approved := Of(parse(t, "w", base))
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Beyond(approved, Of(parse(t, "w", tc.next)))
			if len(got) != len(tc.want) {
				t.Fatalf("Beyond = %q, want %q", got, tc.want)
			}
			for i, w := range tc.want {
				if !strings.HasPrefix(got[i], w) {
					t.Errorf("Beyond[%d] = %q, want %q", i, got[i], w)
				}
			}
		})
	}
}

type fakeApprovals struct {
	rec Record
	ok  bool
	err error
}

func (f fakeApprovals) Approved(string) (Record, bool, error) { return f.rec, f.ok, f.err }

func TestCheckFailsClosed(t *testing.T) {
	m := parse(t, "notes", base)
	wider := parse(t, "notes", strings.Replace(base, `fs_read = ["cwd://"]`, `fs_read = ["cwd://", "/"]`, 1))
	cases := []struct {
		name string
		a    Approvals
		m    *manifest.Manifest
		is   error  // nil: loads
		want string // in the message
	}{
		{"approved", fakeApprovals{rec: Of(m), ok: true}, m, nil, ""},
		{"narrower than approved", fakeApprovals{rec: Of(wider), ok: true}, m, nil, ""},
		{"edited to ask for more", fakeApprovals{rec: Of(m), ok: true}, wider, ErrWidened,
			"capsule notes asks for fs_read = [\"/\"], which was not approved at install; run `astrid capsule install <dir>` again"},
		{"copied in by hand", fakeApprovals{}, m, ErrNotApproved, "astrid capsule approve notes"},
		{"record unreadable", fakeApprovals{err: errors.New("disk on fire")}, m, ErrNotApproved, "disk on fire"},
		{"no record keeper", nil, m, ErrNotApproved, "keeps no approval records"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := Check(tc.a, tc.m)
			if tc.is == nil {
				if err != nil {
					t.Fatalf("Check = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Check = %v, want %v containing %q", err, tc.is, tc.want)
			}
		})
	}
}

func TestBookRoundTripAndRefusesForeignRecords(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "state.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	b := NewBook(st)
	m := parse(t, "notes", base)
	if _, ok, err := b.Approved("notes"); ok || err != nil {
		t.Fatalf("Approved before Approve = %v, %v", ok, err)
	}
	if err := b.Approve(m); err != nil {
		t.Fatal(err)
	}
	if err := Check(b, m); err != nil {
		t.Fatalf("Check after Approve = %v", err)
	}
	// A record copied from another capsule's key, or garbage, does not
	// approve anything.
	other, _, _ := st.Approvals().Get("notes")
	if err := st.Approvals().Set("evil", other); err != nil {
		t.Fatal(err)
	}
	if err := Check(b, parse(t, "evil", base)); !errors.Is(err, ErrNotApproved) {
		t.Errorf("Check with another capsule's record = %v, want ErrNotApproved", err)
	}
	if err := st.Approvals().Set("evil", []byte("{not json")); err != nil {
		t.Fatal(err)
	}
	if err := Check(b, parse(t, "evil", base)); !errors.Is(err, ErrNotApproved) {
		t.Errorf("Check with a garbage record = %v, want ErrNotApproved", err)
	}
	if err := b.Revoke("notes"); err != nil {
		t.Fatal(err)
	}
	if err := Check(b, m); !errors.Is(err, ErrNotApproved) {
		t.Errorf("Check after Revoke = %v, want ErrNotApproved", err)
	}
}
