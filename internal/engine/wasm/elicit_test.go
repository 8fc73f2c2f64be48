package wasm

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
)

// A wasm guest's elicit asks the frontend and gets its answer across the
// ABI: a select's choice, an array's values, and a cancel as CodeDeclined.
func TestElicitFromAGuest(t *testing.T) {
	f := loadHostile(t, Options{})
	frontend, questions := asFrontend(t, f, ipc.ElicitRequestTopic, ipc.ElicitResponseTopic("*"))
	eu := "eu-west-1"
	for _, tc := range []struct {
		name     string
		question string
		answer   ipc.ElicitResponse // RequestID filled in
		want     hostapi.ElicitAnswer
		code     hostapi.Code
	}{
		{"select", `{"key":"REGION","kind":"select","prompt":"Region","options":["us-east-1","eu-west-1"]}`,
			ipc.ElicitResponse{Value: &eu}, hostapi.ElicitAnswer{Value: eu}, 0},
		{"array", `{"key":"TAGS","kind":"array"}`,
			ipc.ElicitResponse{Values: []string{"a", "b"}}, hostapi.ElicitAnswer{Values: []string{"a", "b"}}, 0},
		{"cancelled", `{"key":"API_KEY","kind":"secret"}`,
			ipc.ElicitResponse{}, hostapi.ElicitAnswer{}, hostapi.CodeDeclined},
	} {
		type result struct {
			Answer hostapi.ElicitAnswer `json:"answer"`
			Code   hostapi.Code         `json:"code"`
		}
		got := make(chan result, 1)
		go func() {
			var r result
			v, err := f.invoke(t, context.Background(), "elicit", tc.question)
			if err == nil {
				err = json.Unmarshal(v.Payload, &r)
			}
			if err != nil {
				r.Code = hostapi.CodeInternal
			}
			got <- r
		}()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		d, err := questions.Recv(ctx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		var q ipc.ElicitRequest
		if err := q.UnmarshalJSON(ipc.GuestBytes(d.Envelope.Payload)); err != nil || q.CapsuleID != "hostile" || d.Envelope.SourceID != ipc.KernelSourceID {
			t.Fatalf("%s: question %+v from %s (%v)", tc.name, q, d.Envelope.SourceID, err)
		}
		a := tc.answer
		a.RequestID = q.RequestID
		b, _ := a.MarshalJSON()
		if _, err := f.d.Publish(frontend, ipc.ElicitResponseTopic(q.RequestID), b); err != nil {
			t.Fatal(err)
		}
		r := <-got
		if r.Code != tc.code || r.Answer.Value != tc.want.Value || len(r.Answer.Values) != len(tc.want.Values) {
			t.Fatalf("%s: the guest got %+v, want %+v code %v", tc.name, r, tc.want, tc.code)
		}
	}
}
