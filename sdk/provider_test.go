package sdk

import (
	"errors"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
)

// ProviderRequest hands on a request that decodes, answers one that names
// an id but does not decode with an Error for that id, drops (logging) one
// that names none, and logs a failure reply the host refused.
func TestProviderRequest(t *testing.T) {
	for _, tc := range []struct {
		name, payload string
		failureErr    error
		ok            bool
		errorFor      string // the request id an Error was published for
		log           string
	}{
		{"a request", `{"request_id":"r1","model":"m","messages":[],"tools":[],"system":""}`, nil, true, "", ""},
		{"failure reply refused", `{"request_id":"r2","model":"m","messages":[],"tools":[],"system":""}`, errors.New("no"), true, "", `p: request "r2": failure reply not registered: no`},
		{"not a request, with an id", `{"request_id":"r3","model":5}`, nil, false, "r3", "p: not an llm_request"},
		{"not a request, no id", `{"model":"m"}`, nil, false, "", "p: dropped a request that is not an llm_request"},
		{"an empty id", `{"request_id":"","model":"m","messages":[],"tools":[],"system":""}`, nil, false, "", "p: dropped an llm_request without request_id"},
	} {
		h := &fakeHost{failureErr: tc.failureErr}
		c := &Call{Host: h, inv: hostapi.Invocation{Payload: []byte(tc.payload)}}
		req, ok, err := ProviderRequest(c, "p")
		if err != nil || ok != tc.ok || (ok && req.RequestID == "") {
			t.Errorf("%s: ok %v, err %v, req %+v", tc.name, ok, err, req)
		}
		got := h.published[ipc.LLMStreamTopic("p")]
		if tc.errorFor == "" && got != nil {
			t.Errorf("%s: published %s", tc.name, got)
		}
		if tc.errorFor != "" {
			var ev ipc.LLMStreamEvent
			if err := ev.UnmarshalJSON(got); err != nil || ev.RequestID != tc.errorFor || ev.Event.Kind != ipc.StreamError {
				t.Errorf("%s: published %s (%v)", tc.name, got, err)
			}
		}
		if logs := strings.Join(h.logs, "\n"); (tc.log == "") != (logs == "") || !strings.Contains(logs, tc.log) {
			t.Errorf("%s: logs %q, want %q", tc.name, logs, tc.log)
		}
	}
}
