package wasm

import (
	"encoding/json"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/tetratelabs/wazero/api"
)

// identityImports are the identity calls of docs/abi.md §5 (identity).
var identityImports = []importDef{
	{name: "identity_resolve", params: p(4), fn: func(st *callState, mod api.Module, s []uint64) ([]byte, error) {
		platform, id, err := twoArgs(mod, s, "platform", "platform user id")
		if err != nil {
			return nil, err
		}
		u, found, err := st.call.IdentityResolve(string(platform), string(id))
		if err != nil {
			return nil, err
		}
		if !found {
			return nil, hostapi.Errorf(hostapi.CodeNotFound, "identity_resolve", "%q on %q is linked to no user", id, platform)
		}
		return jsonOf(u)
	}},
	{name: "identity_link", params: p(2), fn: func(st *callState, mod api.Module, s []uint64) ([]byte, error) {
		var req hostapi.IdentityLinkRequest
		if err := jsonArg(mod, s, "identity_link", &req); err != nil {
			return nil, err
		}
		return nil, st.call.IdentityLink(req)
	}},
	{name: "identity_unlink", params: p(4), fn: func(st *callState, mod api.Module, s []uint64) ([]byte, error) {
		platform, id, err := twoArgs(mod, s, "platform", "platform user id")
		if err != nil {
			return nil, err
		}
		return nil, st.call.IdentityUnlink(string(platform), string(id))
	}},
	{name: "identity_list_links", params: p(2), fn: func(st *callState, mod api.Module, s []uint64) ([]byte, error) {
		user, err := arg(mod, s[0], s[1], "user id")
		if err != nil {
			return nil, err
		}
		links, err := st.call.IdentityListLinks(string(user))
		if err != nil {
			return nil, err
		}
		if links == nil {
			links = []hostapi.IdentityLinkInfo{}
		}
		return jsonOf(links)
	}},
	{name: "identity_create_user", params: p(2), fn: func(st *callState, mod api.Module, s []uint64) ([]byte, error) {
		var req hostapi.IdentityNewUser
		if err := jsonArg(mod, s, "identity_create_user", &req); err != nil {
			return nil, err
		}
		u, err := st.call.IdentityCreateUser(req)
		if err != nil {
			return nil, err
		}
		return jsonOf(u)
	}},
}

// jsonArg reads a JSON request argument into v.
func jsonArg(mod api.Module, s []uint64, op string, v any) error {
	raw, err := arg(mod, s[0], s[1], "request")
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return hostapi.Errorf(hostapi.CodeInvalid, op, "request is not the JSON of docs/abi.md: %v", err)
	}
	return nil
}

func init() { registerImports(identityImports) }
