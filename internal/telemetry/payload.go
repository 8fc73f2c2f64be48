package telemetry

import (
	"encoding/json"

	"github.com/astrid-go/astrid/internal/jsonscan"
)

// fields are the few members of a payload the tracer pairs spans by. Each
// is read from the top level of the payload (the tagged form is flat) by a
// structural scan that stops once every wanted member was seen, so that an
// LLM request's long message list is not decoded.
type fields struct {
	callID, sessionID, requestID, turnID, toolName, outcome, decision string
	isFinal, isError, cancel                                          bool
	event                                                             []byte // an llm_stream_event's "event"
}

// want names which members to read.
type want uint16

const (
	wantCallID want = 1 << iota
	wantSession
	wantRequestID
	wantTurnID // a final response's turn_id
	wantContext
	wantToolName
	wantOutcome
	wantDecision
	wantIsFinal
	wantResult
	wantEvent
)

// scan reads the wanted members of payload; what is absent or not of the
// expected type stays zero.
func scan(payload []byte, w want) fields {
	var f fields
	left := w
	jsonscan.ScanObject(payload, func(m jsonscan.Member) bool {
		val := payload[m.ValStart:m.End]
		switch {
		case w&wantCallID != 0 && m.Is("call_id"):
			f.callID, left = str(val), left&^wantCallID
		case w&wantSession != 0 && m.Is("session_id"):
			f.sessionID, left = str(val), left&^wantSession
		case w&wantRequestID != 0 && m.Is("request_id"):
			f.requestID, left = str(val), left&^wantRequestID
		case w&wantTurnID != 0 && m.Is("turn_id"):
			f.turnID, left = str(val), left&^wantTurnID
		case w&wantToolName != 0 && m.Is("tool_name"):
			f.toolName, left = str(val), left&^wantToolName
		case w&wantOutcome != 0 && m.Is("outcome"):
			f.outcome, left = str(val), left&^wantOutcome
		case w&wantDecision != 0 && m.Is("decision"):
			f.decision, left = str(val), left&^wantDecision
		case w&wantIsFinal != 0 && m.Is("is_final"):
			f.isFinal, left = string(val) == "true", left&^wantIsFinal
		case w&wantEvent != 0 && m.Is("event"):
			f.event, left = val, left&^wantEvent
		case w&wantContext != 0 && m.Is("context"):
			var c struct {
				Action string `json:"action"`
				TurnID string `json:"turn_id"`
			}
			if json.Unmarshal(val, &c) == nil {
				f.turnID, f.cancel = c.TurnID, c.Action != ""
			}
			left &^= wantContext
		case w&wantResult != 0 && m.Is("result"):
			var r struct {
				IsError bool `json:"is_error"`
			}
			if json.Unmarshal(val, &r) == nil {
				f.isError = r.IsError
			}
			left &^= wantResult
		}
		return left != 0
	})
	return f
}

// str decodes a JSON string value, "" for anything else.
func str(val []byte) string {
	if len(val) < 2 || val[0] != '"' {
		return ""
	}
	if s, ok := jsonscan.DecodeString(val); ok {
		return s
	}
	var s string
	if json.Unmarshal(val, &s) != nil {
		return ""
	}
	return s
}
