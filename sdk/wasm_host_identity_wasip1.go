//go:build wasip1

package sdk

import (
	"encoding/json"
	"runtime"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/abi"
)

//go:wasmimport astrid identity_resolve
func abiIdentityResolve(platformPtr, platformLen, idPtr, idLen uint32) uint64

//go:wasmimport astrid identity_link
func abiIdentityLink(reqPtr, reqLen uint32) uint64

//go:wasmimport astrid identity_unlink
func abiIdentityUnlink(platformPtr, platformLen, idPtr, idLen uint32) uint64

//go:wasmimport astrid identity_list_links
func abiIdentityListLinks(userPtr, userLen uint32) uint64

//go:wasmimport astrid identity_create_user
func abiIdentityCreateUser(reqPtr, reqLen uint32) uint64

// IdentityResolve finds the user an external account is linked to
// (hostapi.Identity); the host's not found is found == false.
func (*wasmHost) IdentityResolve(platform, platformUserID string) (hostapi.IdentityUser, bool, error) {
	u, err := decodeJSON[hostapi.IdentityUser](call2(abiIdentityResolve, platform, []byte(platformUserID)))
	if hostapi.CodeOf(err) == hostapi.CodeNotFound {
		return hostapi.IdentityUser{}, false, nil
	}
	return u, err == nil, err
}

// callJSON sends v as an import's one JSON argument.
func callJSON(f func(p, n uint32) uint64, op string, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, hostapi.Errorf(hostapi.CodeInvalid, op, "%v", err)
	}
	p, n := abi.BytesPtr(b)
	r := f(p, n)
	runtime.KeepAlive(b)
	return result(r)
}

// IdentityLink links an external account to a user (hostapi.Identity).
func (*wasmHost) IdentityLink(req hostapi.IdentityLinkRequest) error {
	_, err := callJSON(abiIdentityLink, "identity_link", req)
	return err
}

// IdentityUnlink removes an external account's link (hostapi.Identity).
func (*wasmHost) IdentityUnlink(platform, platformUserID string) error {
	_, err := call2(abiIdentityUnlink, platform, []byte(platformUserID))
	return err
}

// IdentityListLinks lists a user's links (hostapi.Identity).
func (*wasmHost) IdentityListLinks(userID string) ([]hostapi.IdentityLinkInfo, error) {
	return decodeJSON[[]hostapi.IdentityLinkInfo](call1(abiIdentityListLinks, userID))
}

// IdentityCreateUser creates a user (hostapi.Identity).
func (*wasmHost) IdentityCreateUser(req hostapi.IdentityNewUser) (hostapi.IdentityUser, error) {
	return decodeJSON[hostapi.IdentityUser](callJSON(abiIdentityCreateUser, "identity_create_user", req))
}
