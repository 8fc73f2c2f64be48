package agentclient

import (
	"encoding/json"

	"github.com/astrid-go/astrid/ipc"
)

// AnswerForm answers the form question q one field at a time, the way a
// terminal frontend asks: required fields first, each as a single-value
// question (ipc.ElicitSchema.Field) that ask answers as it would any
// other (the person's line read by ParseElicitAnswer). Declining a
// required field declines the form; declining an optional one leaves it
// out. The answer is the fields' typed values as the form's content.
func AnswerForm(q ipc.ElicitRequest, ask func(f ipc.OnboardingField) ipc.ElicitResponse) ipc.ElicitResponse {
	declined := ipc.ElicitResponse{RequestID: q.RequestID}
	if q.Form == nil {
		return declined
	}
	s := q.Form.Schema
	content := map[string]json.RawMessage{}
	for _, name := range s.Names() {
		r := ask(s.Field(name))
		if r.Cancelled() {
			if isRequired(s, name) {
				return declined
			}
			continue
		}
		v, err := s.Value(name, r)
		if err != nil {
			return declined
		}
		content[name] = v
	}
	b, err := json.Marshal(content)
	if err != nil || s.CheckContent(b) != nil {
		return declined
	}
	return ipc.ElicitResponse{RequestID: q.RequestID, Content: b}
}

func isRequired(s ipc.ElicitSchema, name string) bool {
	for _, r := range s.Required {
		if r == name {
			return true
		}
	}
	return false
}
