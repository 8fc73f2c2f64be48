// Package publisher owns the two kinds of ed25519 keys capsule signing
// needs on this host: the publisher keys this person signs archives with
// (`astrid key generate`, sealed in the store's secrets, never written in
// the clear), and the trust store of other publishers' public keys
// (`astrid trust add|list|remove`) an install checks a signature against.
// A publisher key is not the host's key (internal/hostkey): it leaves the
// host as signatures on shared archives, the host key never does.
//
// It must not define what is signed or read archives (internal/capsulepack
// does), nor decide whether an unsigned capsule is installed (the CLI asks).
package publisher
