package dispatch

import (
	"encoding/json"
	"errors"
	"testing"
)

// TestAdmitRefusesOnlyPublishesThatStartWork: Options.Admit (the CPU
// budget) refuses a publish that starts work, at once and with its reason,
// and never one that continues admitted work (a handler's publish, a
// failure reply, a cancel), which may be carrying an answer.
func TestAdmitRefusesOnlyPublishesThatStartWork(t *testing.T) {
	over := errors.New("alice is over her CPU budget")
	var asked []string
	d, _ := newTestDispatcher(t, Options{Admit: func(principal string) error {
		asked = append(asked, principal)
		if principal == "alice" {
			return over
		}
		return nil
	}})
	register(t, d, CapsuleACL{ID: "cli", Publish: []string{"tool.v1.request.*"}}, continueTarget)
	payload := json.RawMessage(`{}`)
	tests := []struct {
		name    string
		from    Caller
		kind    Kind
		refused bool
	}{
		{"alice starts work", Caller{Capsule: "cli", Principal: "alice"}, Event, true},
		{"bob starts work", Caller{Capsule: "cli", Principal: "bob"}, Event, false},
		{"alice continues work", Caller{Capsule: "cli", Principal: "alice", Continues: true}, Event, false},
		{"alice's failure reply", Caller{Capsule: "cli", Principal: "alice"}, FailureOf(""), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := d.Publish(tt.from, "tool.v1.request.execute", payload, tt.kind)
			if refused := err != nil; refused != tt.refused {
				t.Fatalf("publish: %v, want refused %v", err, tt.refused)
			}
			if tt.refused && (!errors.Is(err, ErrNotAdmitted) || !errors.Is(err, over)) {
				t.Fatalf("refusal %v does not carry ErrNotAdmitted and the reason", err)
			}
		})
	}
	if got := d.Stats().NotAdmitted; got != 1 {
		t.Errorf("NotAdmitted = %d, want 1", got)
	}
	if len(asked) != 2 {
		t.Errorf("Admit asked %d times (%v), want only for the two publishes that start work", len(asked), asked)
	}
}
