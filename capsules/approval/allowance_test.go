package approval_test

import (
	"testing"
	"time"

	"github.com/astrid-go/astrid/capsules/approval"
)

// ReadAllowance reads back each key the layer keeps, with its time when
// the value holds one (a value written before holds the decision alone),
// and nothing else.
func TestReadAllowance(t *testing.T) {
	since := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	cases := []struct {
		key, value string
		ok         bool
		want       approval.Allowance
	}{
		{"~allow/astrid-capsule-fs/write_file", `{"decision":"approve_session","since":"2025-03-04T05:06:07Z"}`, true,
			approval.Allowance{Session: true, Capsule: "astrid-capsule-fs", Tool: "write_file", Since: since}},
		{"allow/astrid-capsule-fs/create_directory", `{"decision":"approve_always","since":"2025-03-04T05:06:07Z"}`, true,
			approval.Allowance{Capsule: "astrid-capsule-fs", Tool: "create_directory", Since: since}},
		{"allow/notes/add", "approve_always", true, approval.Allowance{Capsule: "notes", Tool: "add"}},
		{"~pending/appr-1", "{}", false, approval.Allowance{}},
		{"allow/notes", "approve_always", false, approval.Allowance{}},
		{"allow//add", "approve_always", false, approval.Allowance{}},
	}
	for _, c := range cases {
		got, ok := approval.ReadAllowance(c.key, []byte(c.value))
		if ok != c.ok || got != c.want {
			t.Errorf("ReadAllowance(%q, %q) = %+v, %v; want %+v, %v", c.key, c.value, got, ok, c.want, c.ok)
		}
	}
	if len(approval.AllowancePrefixes) != 2 {
		t.Fatalf("prefixes %v", approval.AllowancePrefixes)
	}
}
