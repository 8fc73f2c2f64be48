package agentclient_test

import (
	"slices"
	"testing"

	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/ipc"
)

func TestParseElicitAnswer(t *testing.T) {
	def := "eu"
	region := ipc.OnboardingField{Key: "REGION", Default: &def, FieldType: ipc.FieldType{Kind: ipc.FieldEnum, Options: []string{"us", "eu"}}}
	text := ipc.OnboardingField{Key: "NAME", FieldType: ipc.FieldType{Kind: ipc.FieldText}}
	tags := ipc.OnboardingField{Key: "TAGS", FieldType: ipc.FieldType{Kind: ipc.FieldArray}}
	for _, tc := range []struct {
		name     string
		f        ipc.OnboardingField
		line     string
		value    string
		values   []string
		declined bool
		bad      bool
	}{
		{name: "select by number", f: region, line: "1", value: "us"},
		{name: "select by text", f: region, line: " eu ", value: "eu"},
		{name: "select default", f: region, line: "", value: "eu"},
		{name: "select out of range", f: region, line: "3", bad: true},
		{name: "select not an option", f: region, line: "mars", bad: true},
		{name: "dash declines", f: region, line: " - ", declined: true},
		{name: "text as typed", f: text, line: "  Ada ", value: "  Ada "},
		{name: "empty text is an answer", f: text, line: "", value: ""},
		{name: "array", f: tags, line: "a, b,,c ", values: []string{"a", "b", "c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := agentclient.ParseElicitAnswer("id1", tc.f, tc.line)
			switch {
			case tc.bad:
				if err == nil || r.Value != nil || r.Values != nil {
					t.Fatalf("accepted %+v", r)
				}
			case err != nil || r.RequestID != "id1":
				t.Fatalf("%+v, %v", r, err)
			case tc.declined:
				if !r.Cancelled() {
					t.Fatalf("not declined: %+v", r)
				}
			case tc.values != nil:
				if !slices.Equal(r.Values, tc.values) {
					t.Fatalf("values %q", r.Values)
				}
			default:
				if r.Value == nil || *r.Value != tc.value {
					t.Fatalf("value %+v", r)
				}
			}
		})
	}
}
