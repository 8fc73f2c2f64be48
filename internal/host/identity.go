package host

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/store"
)

// The identity calls check the capsule's identity level, then work on the
// kernel's one identity map in the store. Every change is logged with the
// capsule that made it, and kept in the record (LinkedBy, CreatedBy): a
// link decides who an external account speaks as, so the operator must be
// able to see who made it.

// identityGate checks level and that the kernel has a store.
func (call *Call) identityGate(op, level string) (*store.Identities, error) {
	if err := call.live(op); err != nil {
		return nil, err
	}
	if err := call.c.gate.Identity(level); err != nil {
		return nil, hostapi.Errorf(hostapi.CodeDenied, op, "%v", err)
	}
	if call.c.deps.Store == nil {
		return nil, hostapi.Errorf(hostapi.CodeUnavailable, op, "this kernel has no store")
	}
	return call.c.deps.Store.Identities(), nil
}

// identityError maps the store's refusals onto host codes.
func identityError(op string, err error) error {
	code := hostapi.CodeUnavailable
	switch {
	case errors.Is(err, store.ErrInvalid):
		code = hostapi.CodeInvalid
	case errors.Is(err, store.ErrNoUser), errors.Is(err, store.ErrNoLink):
		code = hostapi.CodeNotFound
	case errors.Is(err, store.ErrUserExists), errors.Is(err, store.ErrLinked):
		code = hostapi.CodeExists
	}
	return hostapi.Errorf(code, op, "%v", err)
}

// IdentityResolve implements hostapi.Identity.
func (call *Call) IdentityResolve(platform, platformUserID string) (hostapi.IdentityUser, bool, error) {
	defer call.leave(call.enter(opIdentityResolve))
	const op = "identity_resolve"
	ids, err := call.identityGate(op, "resolve")
	if err != nil {
		return hostapi.IdentityUser{}, false, err
	}
	l, found, err := ids.Resolve(platform, platformUserID)
	if err != nil {
		return hostapi.IdentityUser{}, false, identityError(op, err)
	}
	if !found {
		return hostapi.IdentityUser{}, false, nil
	}
	u, _, err := ids.User(l.UserID)
	if err != nil {
		return hostapi.IdentityUser{}, false, identityError(op, err)
	}
	return hostapi.IdentityUser{UserID: l.UserID, DisplayName: u.DisplayName}, true, nil
}

// IdentityLink implements hostapi.Identity.
func (call *Call) IdentityLink(req hostapi.IdentityLinkRequest) error {
	defer call.leave(call.enter(opIdentityLink))
	const op = "identity_link"
	ids, err := call.identityGate(op, "link")
	if err != nil {
		return err
	}
	err = ids.Link(store.IdentityLink{Platform: req.Platform, PlatformUserID: req.PlatformUserID, UserID: req.UserID,
		Method: req.Method, LinkedAt: time.Now().UTC(), LinkedBy: call.c.id})
	if err != nil {
		return identityError(op, err)
	}
	call.c.log.Info("identity: linked", "principal", call.principal, "platform", req.Platform,
		"platform_user_id", req.PlatformUserID, "user_id", req.UserID, "method", req.Method)
	return nil
}

// IdentityUnlink implements hostapi.Identity.
func (call *Call) IdentityUnlink(platform, platformUserID string) error {
	defer call.leave(call.enter(opIdentityUnlink))
	const op = "identity_unlink"
	ids, err := call.identityGate(op, "link")
	if err != nil {
		return err
	}
	l, err := ids.Unlink(platform, platformUserID)
	if err != nil {
		return identityError(op, err)
	}
	call.c.log.Info("identity: unlinked", "principal", call.principal, "platform", platform,
		"platform_user_id", platformUserID, "user_id", l.UserID)
	return nil
}

// IdentityListLinks implements hostapi.Identity.
func (call *Call) IdentityListLinks(userID string) ([]hostapi.IdentityLinkInfo, error) {
	defer call.leave(call.enter(opIdentityListLinks))
	const op = "identity_list_links"
	ids, err := call.identityGate(op, "link")
	if err != nil {
		return nil, err
	}
	links, err := ids.Links(userID)
	if err != nil {
		return nil, identityError(op, err)
	}
	out := make([]hostapi.IdentityLinkInfo, len(links))
	for i, l := range links {
		out[i] = hostapi.IdentityLinkInfo{Platform: l.Platform, PlatformUserID: l.PlatformUserID, UserID: l.UserID,
			Method: l.Method, LinkedAt: l.LinkedAt, LinkedBy: l.LinkedBy}
	}
	return out, nil
}

// IdentityCreateUser implements hostapi.Identity.
func (call *Call) IdentityCreateUser(req hostapi.IdentityNewUser) (hostapi.IdentityUser, error) {
	defer call.leave(call.enter(opIdentityCreateUser))
	const op = "identity_create_user"
	ids, err := call.identityGate(op, "admin")
	if err != nil {
		return hostapi.IdentityUser{}, err
	}
	id := req.UserID
	if id == "" {
		var b [8]byte
		_, _ = rand.Read(b[:])
		id = "user-" + hex.EncodeToString(b[:])
	}
	if err := ids.CreateUser(store.IdentityUser{UserID: id, DisplayName: req.DisplayName, CreatedAt: time.Now().UTC(), CreatedBy: call.c.id}); err != nil {
		return hostapi.IdentityUser{}, identityError(op, err)
	}
	call.c.log.Info("identity: user created", "principal", call.principal, "user_id", id)
	return hostapi.IdentityUser{UserID: id, DisplayName: req.DisplayName}, nil
}
