//go:build wasip1

package sdk

import (
	"encoding/json"

	"github.com/astrid-go/astrid/hostapi"
)

//go:wasmimport astrid uplink_publish
func abiUplinkPublish(reqPtr, reqLen, payloadPtr, payloadLen uint32) uint64

//go:wasmimport astrid uplink_subscribe
func abiUplinkSubscribe(principalPtr, principalLen, patternPtr, patternLen uint32) uint64

//go:wasmimport astrid uplink_open_scope
func abiUplinkOpenScope(reqPtr, reqLen uint32) uint64

//go:wasmimport astrid uplink_close_scope
func abiUplinkCloseScope(id uint64) uint64

var _ hostapi.Uplink = (*wasmHost)(nil)

// uplinkPublish is uplink_publish's request (docs/abi.md, Uplink).
type uplinkPublish struct {
	Principal string           `json:"principal"`
	Topic     string           `json:"topic"`
	Scope     uint64           `json:"scope,omitempty"`
	Request   *hostapi.Request `json:"request,omitempty"`
}

// uplinkScope is uplink_open_scope's request; its answer is uplinkOpened.
type uplinkScope struct {
	Principal string                       `json:"principal"`
	Workspace string                       `json:"workspace,omitempty"`
	Config    map[string]map[string]string `json:"config,omitempty"`
	PeerUID   *int                         `json:"peer_uid,omitempty"`
}

type uplinkOpened struct {
	ID        uint64 `json:"id"`
	Workspace string `json:"workspace"`
}

func publishAs(req uplinkPublish, payload []byte) error {
	raw, err := json.Marshal(req)
	if err != nil {
		return err
	}
	_, err = call2(abiUplinkPublish, string(raw), payload)
	return err
}

// PublishAs publishes for principal (hostapi.Uplink).
func (*wasmHost) PublishAs(principal, topic string, payload []byte) error {
	return publishAs(uplinkPublish{Principal: principal, Topic: topic}, payload)
}

// PublishIn publishes for principal in a scope (hostapi.Uplink).
func (*wasmHost) PublishIn(principal string, scope uint64, topic string, payload []byte) error {
	return publishAs(uplinkPublish{Principal: principal, Topic: topic, Scope: scope}, payload)
}

// RequestIn publishes a request for principal in a scope (hostapi.Uplink).
func (*wasmHost) RequestIn(principal string, scope uint64, topic string, payload []byte, req hostapi.Request) error {
	return publishAs(uplinkPublish{Principal: principal, Topic: topic, Scope: scope, Request: &req}, payload)
}

// SubscribeAs subscribes to principal's events (hostapi.Uplink). The host
// cannot run guest code as events are published, so a guest filters what
// it receives itself: accept must be nil.
func (*wasmHost) SubscribeAs(principal, pattern string, accept func(payload []byte) bool) (hostapi.SubscriptionID, error) {
	if accept != nil {
		return 0, hostapi.Errorf(hostapi.CodeNotSupported, "uplink_subscribe", "a wasm guest cannot filter in the host: pass nil and filter what Recv returns")
	}
	id, err := u64(call2(abiUplinkSubscribe, principal, []byte(pattern)))
	return hostapi.SubscriptionID(id), err
}

// OpenScope opens a request scope for principal (hostapi.Uplink).
func (*wasmHost) OpenScope(principal string, s hostapi.Scope) (uint64, string, error) {
	req := uplinkScope{Principal: principal, Workspace: s.Workspace, Config: s.Config}
	if s.PeerUID >= 0 {
		uid := s.PeerUID
		req.PeerUID = &uid
	}
	raw, err := json.Marshal(req)
	if err != nil {
		return 0, "", err
	}
	o, err := decodeJSON[uplinkOpened](call1(abiUplinkOpenScope, string(raw)))
	return o.ID, o.Workspace, err
}

// CloseScope forgets a scope (hostapi.Uplink).
func (*wasmHost) CloseScope(id uint64) { _, _ = result(abiUplinkCloseScope(id)) }
