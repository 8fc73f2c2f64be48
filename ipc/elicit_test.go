package ipc

import (
	"strings"
	"testing"
)

// CheckAnswer takes exactly the answers that fit their question, and its
// errors never quote the answer.
func TestElicitCheckAnswer(t *testing.T) {
	s := func(v string) *string { return &v }
	text := OnboardingField{Key: "K", Prompt: "p", FieldType: FieldType{Kind: FieldText}}
	secret := OnboardingField{Key: "K", Prompt: "p", FieldType: FieldType{Kind: FieldSecret}}
	enum := OnboardingField{Key: "K", Prompt: "p", FieldType: FieldType{Kind: FieldEnum, Options: []string{"a", "b"}}}
	array := OnboardingField{Key: "K", Prompt: "p", FieldType: FieldType{Kind: FieldArray}}
	big := strings.Repeat("x", MaxElicitAnswer+1)
	for _, tc := range []struct {
		name string
		f    OnboardingField
		r    ElicitResponse
		ok   bool
	}{
		{"cancelled", secret, ElicitResponse{}, true},
		{"an empty text", text, ElicitResponse{Value: s("")}, true},
		{"a secret", secret, ElicitResponse{Value: s("sk-hidden")}, true},
		{"a secret as values", secret, ElicitResponse{Values: []string{"sk-hidden"}}, false},
		{"both set", text, ElicitResponse{Value: s("a"), Values: []string{"b"}}, false},
		{"an option", enum, ElicitResponse{Value: s("b")}, true},
		{"not an option", enum, ElicitResponse{Value: s("sk-hidden")}, false},
		{"an empty choice", enum, ElicitResponse{Value: s("")}, false},
		{"a value over the cap", secret, ElicitResponse{Value: s("sk-hidden" + big)}, false},
		{"a value that is not UTF-8", secret, ElicitResponse{Value: s("sk-hidden\xff")}, false},
		{"values", array, ElicitResponse{Values: []string{"a", "b"}}, true},
		{"no values", array, ElicitResponse{Values: []string{}}, true},
		{"an array as value", array, ElicitResponse{Value: s("a,b")}, false},
		{"too many values", array, ElicitResponse{Values: make([]string, MaxElicitValues+1)}, false},
		{"values over the cap together", array, ElicitResponse{Values: []string{big[:MaxElicitAnswer/2], big[:MaxElicitAnswer/2+1]}}, false},
		{"a value that is not UTF-8 in values", array, ElicitResponse{Values: []string{"sk-hidden\xff"}}, false},
	} {
		err := tc.f.CheckAnswer(tc.r)
		if (err == nil) != tc.ok {
			t.Errorf("%s: %v, want ok %v", tc.name, err, tc.ok)
		}
		if err != nil && strings.Contains(err.Error(), "sk-hidden") {
			t.Errorf("%s: the error quotes the answer: %v", tc.name, err)
		}
	}
}

// A question's call_id travels when set and is left out when not, so
// upstream's form is unchanged.
func TestElicitRequestCallID(t *testing.T) {
	q := ElicitRequest{RequestID: "r", CapsuleID: "c", Field: OnboardingField{Key: "K", Prompt: "p", FieldType: FieldType{Kind: FieldText}}}
	b, err := q.MarshalJSON()
	if err != nil || strings.Contains(string(b), "call_id") {
		t.Fatalf("%s, %v", b, err)
	}
	q.CallID = "call-1"
	b, _ = q.MarshalJSON()
	var back ElicitRequest
	if err := back.UnmarshalJSON(b); err != nil || back.CallID != "call-1" {
		t.Fatalf("%s: %+v, %v", b, back, err)
	}
}
