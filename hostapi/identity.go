package hostapi

import "time"

// Identity is the kernel's map from external accounts (a platform such as
// "discord" and that platform's user id) to Astrid users, whose ids are
// principals. It is one map for the whole kernel, kept on disk. Each call
// needs a level of the capsule's `identity` grant: resolve for
// IdentityResolve; link for IdentityLink, IdentityUnlink and
// IdentityListLinks; admin for IdentityCreateUser. admin implies link,
// link implies resolve.
//
// A capsule holding `link` decides which principal an external account
// speaks as: whoever controls that account can then act as that user
// through any uplink that resolves it. Grant it only to a capsule trusted
// to verify the account (a one-time code, say) before linking.
//
// Platforms are 1 to 64 bytes, platform user ids 1 to 256, display names up
// to 256 and methods up to 64: UTF-8, without control characters, not blank.
type Identity interface {
	// IdentityResolve returns the user an external account is linked to;
	// found is false when it is linked to none.
	IdentityResolve(platform, platformUserID string) (user IdentityUser, found bool, err error)
	// IdentityLink links an external account to an existing user
	// (CodeNotFound when the user was never created, CodeExists when the
	// account is already linked: unlink it first to move it).
	IdentityLink(link IdentityLinkRequest) error
	// IdentityUnlink removes an account's link (CodeNotFound when none).
	IdentityUnlink(platform, platformUserID string) error
	// IdentityListLinks lists a user's links.
	IdentityListLinks(userID string) ([]IdentityLinkInfo, error)
	// IdentityCreateUser creates a user; an empty UserID is chosen by the
	// kernel ("user-" and 16 hex digits). CodeExists when taken.
	IdentityCreateUser(req IdentityNewUser) (IdentityUser, error)
}

// IdentityUser is an Astrid user; UserID is a principal.
type IdentityUser struct {
	UserID      string `json:"user_id"`
	DisplayName string `json:"display_name,omitempty"`
}

// IdentityNewUser asks for a user.
type IdentityNewUser struct {
	UserID      string `json:"user_id,omitempty"`
	DisplayName string `json:"display_name,omitempty"`
}

// IdentityLinkRequest links Platform/PlatformUserID to UserID; Method says
// how the account was verified ("code", "oauth"), for the record.
type IdentityLinkRequest struct {
	Platform       string `json:"platform"`
	PlatformUserID string `json:"platform_user_id"`
	UserID         string `json:"user_id"`
	Method         string `json:"method,omitempty"`
}

// IdentityLinkInfo is a recorded link: when, how and by which capsule.
type IdentityLinkInfo struct {
	Platform       string    `json:"platform"`
	PlatformUserID string    `json:"platform_user_id"`
	UserID         string    `json:"user_id"`
	Method         string    `json:"method,omitempty"`
	LinkedAt       time.Time `json:"linked_at"`
	LinkedBy       string    `json:"linked_by,omitempty"`
}
