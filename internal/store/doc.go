// Package store owns the kernel's durable state: a per-principal, per-capsule
// key-value store, the operator's plain per-capsule config values, the
// operator's sealed per-capsule secrets and approval records, all in one bbolt file
// ($ASTRID_HOME/state.db) plus one key file ($ASTRID_HOME/secrets.key). It
// also holds the key-value store's volatile keys (those whose first byte is
// '~'), in memory only, bounded per namespace (volatile.go).
//
// It must not decide who may touch which namespace (internal/host hands a
// capsule only its own KV view for the invoking principal), must not know
// about capsules' manifests, and must never block forever: the file is
// opened with a timeout, and a lock held elsewhere past it is ErrInUse.
//
// # Promises
//
// A write (Set, Delete, ClearPrefix, a secret's Set) returns only once it is
// committed and fsynced: what a caller saw succeed survives kill -9 and a
// power cut. Writes that overlap in one process share a commit (bbolt's
// DB.Batch). The file, and with it bbolt's lock, is open only while
// operations use it (and 5 ms after; a busy Store gives it up every 250 ms
// for a turn of others), so several processes (astrid commands, a daemon)
// share one $ASTRID_HOME; an operation waits for another process's lock up
// to Options.Timeout (config store_lock_wait), then fails with ErrInUse.
//
// A volatile key (first byte '~', in a capsule's KV only; config keys are all
// durable) is never written to the file and is gone when the Store closes:
// its writes return at memory speed and promise nothing past the process.
//
// # Bucket layout
//
// Namespaces are nested bbolt buckets, never concatenated strings, so no key,
// however crafted (separators, NUL, "..", another principal's name), can
// reach a sibling namespace:
//
//	meta                          format = "1"
//	kv / <principal> / <capsule>  capsule KV for one invoking principal
//	config / <capsule>            operator-set plain env values of a capsule
//	secrets / <capsule>           operator-set secret env values, sealed
//	identity / users, links, by_user  the kernel's identity map (identity.go)
//	approvals                     <capsule> = what the operator approved at
//	                              install (internal/grants' record; opaque here)
//
// Principal ids are [A-Za-z0-9_-]{1,64}; capsule ids are lowercase ASCII
// letters, digits and hyphens (upstream's CapsuleId rule). Keys are 1 byte
// to 1 KiB of UTF-8 without NUL; values are at most 1 MiB (secrets 64 KiB,
// and never empty).
//
// The identity map (which principal an external account speaks as) is the
// kernel's, one for all capsules; who may read or change it is decided above
// (internal/gate's identity levels, checked by internal/host).
//
// Config and secrets are scoped to the capsule, not to a principal: they are
// what the operator configured for the install (an API key, a base URL), the
// same for everyone the capsule acts for. A capsule's guest code never sees
// these two namespaces directly; the host reads them to answer "sys config"
// calls.
//
// # Secrets
//
// A sealed value is: one format byte (1), a random 12-byte nonce, and the
// AES-256-GCM ciphertext with its tag. The additional data binds the value
// to its namespace and key, so a sealed value copied to another key or
// another capsule does not open. The 32-byte key lives in a separate file
// (0600, created on first use, refused if group/world-accessible or of the
// wrong size).
//
// This protects copies of the database (a backup, a synced directory, a
// file attached to a bug report), not a compromised host: anyone who can read
// the key file as the operator can read every secret.
package store
