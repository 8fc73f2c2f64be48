package agentclient

import (
	"testing"

	"github.com/astrid-go/astrid/ipc"
)

// TestAnswerFormFieldByField: each field is asked as one value, its line
// read as for any question and typed for its field; an optional field
// declined is left out, a required one declines the form, and a typed
// answer that does not fit declines it.
func TestAnswerFormFieldByField(t *testing.T) {
	schema, err := ipc.ParseElicitSchema([]byte(`{"type":"object","properties":{
		"name":{"type":"string","default":"Ada"},"age":{"type":"integer"},"ok":{"type":"boolean"},"tags":{"type":"array","items":{"enum":["a","b"]}}},"required":["name"]}`))
	if err != nil {
		t.Fatal(err)
	}
	q := ipc.ElicitRequest{RequestID: "r1", Form: &ipc.ElicitForm{Schema: schema}}
	for _, c := range []struct {
		lines map[string]string
		want  string // "" declined
	}{
		{map[string]string{"name": "", "age": "36", "ok": "1", "tags": "a, b"}, `{"age":36,"name":"Ada","ok":true,"tags":["a","b"]}`},
		{map[string]string{"name": "Grace", "age": "-", "ok": "-", "tags": "-"}, `{"name":"Grace"}`},
		{map[string]string{"name": "-"}, ""},
		{map[string]string{"name": "Grace", "age": "old"}, ""},
		{map[string]string{"name": "Grace", "age": "1", "ok": "2", "tags": "c"}, ""},
	} {
		var asked []string
		r := AnswerForm(q, func(f ipc.OnboardingField) ipc.ElicitResponse {
			asked = append(asked, f.Key)
			line, ok := c.lines[f.Key]
			if !ok {
				line = "-"
			}
			r, err := ParseElicitAnswer("r1", f, line)
			if err != nil {
				return ipc.ElicitResponse{RequestID: "r1"}
			}
			return r
		})
		if got := string(r.Content); got != c.want || r.RequestID != "r1" {
			t.Errorf("lines %v: %q, want %q", c.lines, got, c.want)
		}
		if asked[0] != "name" {
			t.Errorf("asked %v: the required field first", asked)
		}
	}
}
