package grants

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/astrid-go/astrid/internal/audit"
	"github.com/astrid-go/astrid/internal/hostkey"

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
	r := Of(m)
	sum := sha256.Sum256(data)
	detail := map[string]string{"record_sha256": hex.EncodeToString(sum[:]), "grants": clip(strings.Join(r.Grants, "; "))}
	if len(r.HighRisk) > 0 {
		detail["high_risk_accepted"] = clip(strings.Join(r.HighRisk, "; "))
	}
	if err := b.audit(audit.Entry{Kind: audit.KindGrantRecorded, Capsule: m.ID(), Subject: r.Version, Outcome: "approved", Detail: detail}); err != nil {
		// Not on record in the chain: not approved either.
		_ = b.st.Approvals().Delete(m.ID())
		return fmt.Errorf("grants: approve %s: %w", m.ID(), err)
	}
	return nil
}

// audit appends e to the system chain of the audit directory beside the
// state database ($ASTRID_HOME/audit), signed with the host key.
func (b *Book) audit(e audit.Entry) error {
	key, err := hostkey.Load(b.st)
	if err != nil {
		return err
	}
	return audit.AppendOnce(context.Background(), filepath.Join(filepath.Dir(b.st.Path()), "audit"), key, e)
}

// clip keeps a list of grants within what one audit field holds.
func clip(s string) string {
	if len(s) > audit.MaxFieldBytes {
		return s[:audit.MaxFieldBytes-3] + "..."
	}
	return s
}

// Revoke deletes capsule id's record: it does not load again until it is
// approved again.
func (b *Book) Revoke(id string) error {
	if err := b.st.Approvals().Delete(id); err != nil {
		return fmt.Errorf("grants: revoke %s: %w", id, err)
	}
	if err := b.audit(audit.Entry{Kind: audit.KindGrantRemoved, Capsule: id, Outcome: "revoked"}); err != nil {
		return fmt.Errorf("grants: revoke %s: %w", id, err)
	}
	return nil
}
