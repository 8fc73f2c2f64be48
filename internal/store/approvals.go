package store

import (
	"fmt"
)

// bucketApprovals holds, per capsule id, the record of what the operator
// approved when installing it (internal/grants writes and reads it; to the
// store it is an opaque value).
var bucketApprovals = []byte("approvals")

// Approvals is the operator's approval records, one value per capsule id.
// Like Config and Secrets it belongs to the install, not to a principal, and
// no capsule ever reaches it: only the installer writes it and only the
// runtime reads it.
type Approvals struct{ s *Store }

// Approvals is the namespace of approval records.
func (s *Store) Approvals() *Approvals { return &Approvals{s: s} }

func (a *Approvals) ns(capsule string) namespace {
	return newNamespace(a.s, "approvals", validateCapsule(capsule), string(bucketApprovals))
}

// Get returns capsule's record and whether one exists.
func (a *Approvals) Get(capsule string) ([]byte, bool, error) {
	ns := a.ns(capsule)
	if ns.err != nil {
		return nil, false, ns.wrap("get", capsule, ns.err)
	}
	v, ok, err := ns.get(capsule)
	if err != nil {
		return nil, false, ns.wrap("get", capsule, err)
	}
	return v, ok, nil
}

// Set replaces capsule's record; it is durable when Set returns.
func (a *Approvals) Set(capsule string, record []byte) error {
	ns := a.ns(capsule)
	switch {
	case ns.err != nil:
		return ns.wrap("set", capsule, ns.err)
	case len(record) == 0:
		return ns.wrap("set", capsule, fmt.Errorf("an approval record must not be empty (delete it instead): %w", ErrInvalid))
	case len(record) > MaxValueBytes:
		return ns.wrap("set", capsule, fmt.Errorf("record is %d bytes, over the %d-byte limit: %w", len(record), MaxValueBytes, ErrInvalid))
	}
	if err := ns.put(capsule, record); err != nil {
		return ns.wrap("set", capsule, err)
	}
	return nil
}

// Delete removes capsule's record; a missing one is not an error.
func (a *Approvals) Delete(capsule string) error {
	ns := a.ns(capsule)
	if ns.err != nil {
		return ns.wrap("delete", capsule, ns.err)
	}
	if err := ns.delete(capsule); err != nil {
		return ns.wrap("delete", capsule, err)
	}
	return nil
}
