package natsbus

import (
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"
)

// CapsuleCreds is what MintCapsuleCreds makes: a NATS credentials file and
// the user's public key.
type CapsuleCreds struct {
	// File is the decorated user JWT and nkey seed (nats.UserCredentials).
	File []byte
	// User is the user's public nkey, the subject of its JWT.
	User string
}

// MintCapsuleCreds mints the credentials of capsule id of host for an
// external cluster in decentralized (operator) mode: a fresh user nkey and
// a user JWT signed by account — the key of an account whose JWT the
// operator's key signed — whose broker permissions are
// exactly those the embedded server gives the capsule's connection (the
// manifest's [publish] and [subscribe] keys, subjects carrying the
// capsule's id). A key NATS cannot carry refuses the mint, naming it. ttl
// zero mints credentials that do not expire. The hosts never hold the
// account key: whoever mints (the operator) does, which is what holds a
// compromised host to its capsules' grants (docs/nats.md, Trust).
func MintCapsuleCreds(account nkeys.KeyPair, host, id string, publish, subscribe []string, ttl time.Duration) (CapsuleCreds, error) {
	if err := checkCapsuleID(host); err != nil {
		return CapsuleCreds{}, fmt.Errorf("natsbus: mint: host id: %w", err)
	}
	pub, sub, err := grants(id, publish, subscribe)
	if err != nil {
		return CapsuleCreds{}, fmt.Errorf("natsbus: mint capsule %s: %w", id, err)
	}
	creds, err := mintUser(account, "capsule:"+host+":"+id, capsulePermissions(pub, sub), ttl)
	if err != nil {
		return CapsuleCreds{}, fmt.Errorf("natsbus: mint capsule %s: %w", id, err)
	}
	return creds, nil
}

// MintHostCreds mints the credentials of host's own connections on an
// external cluster (Options.Connect when Options.CredsDir holds its
// capsules'): its receiver and presence connections. They may publish
// only the host's presence subject, so whoever holds them cannot publish
// as any capsule; they may subscribe to every capsule subject (the host
// receives the union of its capsules' keys, which changes as capsules
// load) and to the hosts' presence.
func MintHostCreds(account nkeys.KeyPair, host string, ttl time.Duration) (CapsuleCreds, error) {
	if err := checkCapsuleID(host); err != nil {
		return CapsuleCreds{}, fmt.Errorf("natsbus: mint: host id: %w", err)
	}
	publish, subscribe := presenceSubjects(host)
	perms := &server.Permissions{
		Publish:   &server.SubjectPermission{Allow: publish},
		Subscribe: &server.SubjectPermission{Allow: append([]string{SubjectPrefix + ".>"}, subscribe...)},
		Response:  responseGrant(),
	}
	creds, err := mintUser(account, "host:"+host, perms, ttl)
	if err != nil {
		return CapsuleCreds{}, fmt.Errorf("natsbus: mint host %s: %w", host, err)
	}
	return creds, nil
}

// mintUser makes a fresh user nkey and its JWT, named name, with perms,
// signed by account.
func mintUser(account nkeys.KeyPair, name string, perms *server.Permissions, ttl time.Duration) (CapsuleCreds, error) {
	issuer, err := account.PublicKey()
	if err != nil || !nkeys.IsValidPublicAccountKey(issuer) {
		return CapsuleCreds{}, errors.New("the signing key is not an account key")
	}
	user, err := nkeys.CreateUser()
	if err != nil {
		return CapsuleCreds{}, err
	}
	userPub, _ := user.PublicKey()
	seed, _ := user.Seed()
	claims := jwt.NewUserClaims(userPub)
	claims.Name = name
	claims.Pub.Allow.Add(perms.Publish.Allow...)
	claims.Pub.Deny.Add(perms.Publish.Deny...)
	claims.Sub.Allow.Add(perms.Subscribe.Allow...)
	claims.Sub.Deny.Add(perms.Subscribe.Deny...)
	if r := perms.Response; r != nil {
		claims.Resp = &jwt.ResponsePermission{MaxMsgs: r.MaxMsgs, Expires: r.Expires}
	}
	if ttl > 0 {
		claims.Expires = time.Now().Add(ttl).Unix()
	}
	token, err := claims.Encode(account)
	if err != nil {
		return CapsuleCreds{}, err
	}
	file, err := jwt.FormatUserConfig(token, seed)
	if err != nil {
		return CapsuleCreds{}, err
	}
	return CapsuleCreds{File: file, User: userPub}, nil
}
