package wasm

import (
	"github.com/tetratelabs/wazero/api"

	"github.com/astrid-go/astrid/hostapi"
)

// UplinkPublish is the request of uplink_publish (docs/abi.md, Uplink): an
// event for Principal, in scope Scope (0: none), a request when Request is
// set.
type UplinkPublish struct {
	Principal string           `json:"principal"`
	Topic     string           `json:"topic"`
	Scope     uint64           `json:"scope,omitempty"`
	Request   *hostapi.Request `json:"request,omitempty"`
}

// UplinkScope is the request of uplink_open_scope.
type UplinkScope struct {
	Principal string                       `json:"principal"`
	Workspace string                       `json:"workspace,omitempty"`
	Config    map[string]map[string]string `json:"config,omitempty"`
	// PeerUID is the client's uid as the kernel reported it for a unix
	// socket (net_accept's peer); absent: no peer to check (-1).
	PeerUID *int `json:"peer_uid,omitempty"`
}

// UplinkScopeOpened is uplink_open_scope's answer.
type UplinkScopeOpened struct {
	ID        uint64 `json:"id"`
	Workspace string `json:"workspace"`
}

// uplinkImports are hostapi.Uplink for a guest (docs/abi.md, Uplink): the
// host checks each call as it checks a native uplink's (the uplink grant,
// the principals the operator lets it act for, its own [publish] and
// [subscribe]).
var uplinkImports = []importDef{
	{name: "uplink_publish", params: p(4), fn: func(st *callState, mod api.Module, s []uint64) ([]byte, error) {
		var req UplinkPublish
		if err := jsonArg(mod, s, "uplink_publish", &req); err != nil {
			return nil, err
		}
		payload, err := arg(mod, s[2], s[3], "payload")
		if err != nil {
			return nil, err
		}
		if req.Request != nil {
			return nil, st.call.RequestIn(req.Principal, req.Scope, req.Topic, payload, *req.Request)
		}
		if req.Scope != 0 {
			return nil, st.call.PublishIn(req.Principal, req.Scope, req.Topic, payload)
		}
		return nil, st.call.PublishAs(req.Principal, req.Topic, payload)
	}},
	{name: "uplink_subscribe", params: p(4), fn: func(st *callState, mod api.Module, s []uint64) ([]byte, error) {
		principal, pattern, err := twoArgs(mod, s, "principal", "pattern")
		if err != nil {
			return nil, err
		}
		id, err := st.call.SubscribeAs(string(principal), string(pattern), nil) // a guest filters what it receives
		return u64(uint64(id)), err
	}},
	{name: "uplink_open_scope", params: p(2), fn: func(st *callState, mod api.Module, s []uint64) ([]byte, error) {
		var req UplinkScope
		if err := jsonArg(mod, s, "uplink_open_scope", &req); err != nil {
			return nil, err
		}
		uid := -1
		if req.PeerUID != nil {
			uid = *req.PeerUID
		}
		id, ws, err := st.call.OpenScope(req.Principal, hostapi.Scope{Workspace: req.Workspace, Config: req.Config, PeerUID: uid})
		if err != nil {
			return nil, err
		}
		return jsonOf(UplinkScopeOpened{ID: id, Workspace: ws})
	}},
	{name: "uplink_close_scope", params: []api.ValueType{i64}, fn: func(st *callState, _ api.Module, s []uint64) ([]byte, error) {
		st.call.CloseScope(s[0])
		return nil, nil
	}},
}

func init() { registerImports(uplinkImports) }
