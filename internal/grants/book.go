package grants

import (
	"encoding/json"
	"fmt"

	"github.com/astrid-go/astrid/internal/store"
	"github.com/astrid-go/astrid/manifest"
)

// Book keeps the approval records in the state database.
type Book struct{ st *store.Store }

// NewBook is the approval records of st.
func NewBook(st *store.Store) *Book { return &Book{st: st} }

// Approved returns capsule id's record. A record that does not decode, or
// names another capsule, is an error: Check then refuses the capsule.
func (b *Book) Approved(id string) (Record, bool, error) {
	data, ok, err := b.st.Approvals().Get(id)
	if err != nil || !ok {
		return Record{}, false, err
	}
	var r Record
	if err := json.Unmarshal(data, &r); err != nil {
		return Record{}, false, fmt.Errorf("grants: record of %s: %w", id, err)
	}
	if r.Format != FormatVersion || r.Capsule != id {
		return Record{}, false, fmt.Errorf("grants: record of %s is format %d for capsule %q; approve the capsule again", id, r.Format, r.Capsule)
	}
	return r, true, nil
}

// Approve records what m asks for as approved, replacing any earlier
// record. The caller has shown the operator these grants and has their
// confirmation.
func (b *Book) Approve(m *manifest.Manifest) error {
	data, err := json.Marshal(Of(m))
	if err != nil {
		return fmt.Errorf("grants: approve %s: %w", m.ID(), err)
	}
	if err := b.st.Approvals().Set(m.ID(), data); err != nil {
		return fmt.Errorf("grants: approve %s: %w", m.ID(), err)
	}
	return nil
}

// Revoke deletes capsule id's record: it does not load again until it is
// approved again.
func (b *Book) Revoke(id string) error {
	if err := b.st.Approvals().Delete(id); err != nil {
		return fmt.Errorf("grants: revoke %s: %w", id, err)
	}
	return nil
}
