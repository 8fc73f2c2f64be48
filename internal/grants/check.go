package grants

import (
	"errors"
	"fmt"
	"strings"

	"github.com/astrid-go/astrid/manifest"
)

// ErrNotApproved is wrapped by Check's refusal of a capsule the operator
// never approved (copied in by hand, or its record deleted).
var ErrNotApproved = errors.New("not approved by the operator")

// ErrWidened is wrapped by Check's refusal of a manifest that asks for more
// than its approved record.
var ErrWidened = errors.New("asks for more than was approved at install")

// Approvals answers what the operator approved for a capsule: its record,
// and whether there is one. An error means the answer is unknown (and so,
// to Check, a refusal).
type Approvals interface {
	Approved(id string) (Record, bool, error)
}

// Check decides whether the installed capsule m may load: its approved
// record must exist and hold everything m asks for. a nil means no record
// can be consulted, which refuses every capsule.
func Check(a Approvals, m *manifest.Manifest) error {
	id := m.ID()
	if a == nil {
		return fmt.Errorf("capsule %s: this kernel keeps no approval records, so no installed capsule loads: %w", id, ErrNotApproved)
	}
	approved, ok, err := a.Approved(id)
	if err != nil {
		return fmt.Errorf("capsule %s is not loaded: its approval record cannot be read (%w): %w", id, err, ErrNotApproved)
	}
	if !ok {
		return fmt.Errorf("capsule %s in %s was never approved (copied in by hand, or removed and not installed again): review its grants and approve them with `astrid capsule approve %s`, or install it with `astrid capsule install <dir>`: %w", id, m.Dir, id, ErrNotApproved)
	}
	if more := Beyond(approved, Of(m)); len(more) > 0 {
		return fmt.Errorf("capsule %s asks for %s, which %s not approved at install; run `astrid capsule install <dir>` again (or `astrid capsule approve %s`) to review and approve it: %w",
			id, summary(more), wasWere(len(more)), id, ErrWidened)
	}
	return nil
}

func wasWere(n int) string {
	if n == 1 {
		return "was"
	}
	return "were"
}

// summary joins up to five items, then says how many more there are.
func summary(items []string) string {
	const most = 5
	if len(items) <= most {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:most], ", "), len(items)-most)
}
