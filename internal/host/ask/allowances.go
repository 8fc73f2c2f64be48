package ask

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/astrid-go/astrid/internal/store"
)

// Allowance is one standing allowance of the host approval call: capsule
// Capsule may do Action on Resource for a principal without asking again,
// for the life of this kernel (Session) or always (kept in the store).
type Allowance struct {
	// Key names the allowance in its store (allowanceKey).
	Key     string
	Session bool
	Capsule string
	// Action and Resource are what the person approved, as the question
	// showed them; both empty when Unnamed.
	Action   string
	Resource string
	// Since is when it was given; zero when not recorded.
	Since time.Time
	// Unnamed is an "always" recorded before the kernel kept what was
	// approved (its value held only the decision): only its capsule is
	// known, from its key.
	Unnamed bool
}

// alwaysValue is the stored value of an "always" allowance. Values written
// before it held only the decision ("approve_always"), and are still read.
type alwaysValue struct {
	Decision string    `json:"decision"`
	Capsule  string    `json:"capsule"`
	Action   string    `json:"action"`
	Resource string    `json:"resource"`
	Since    time.Time `json:"since"`
}

// alwaysRecord is the stored value of al, given by decision.
func alwaysRecord(decision string, al Allowance) []byte {
	b, err := json.Marshal(alwaysValue{Decision: decision, Capsule: al.Capsule, Action: al.Action, Resource: al.Resource, Since: al.Since})
	if err != nil { // strings and a time: cannot fail
		return []byte(decision)
	}
	return b
}

// allowancePrefix is the key prefix of every allowance in a principal's
// approvalsNamespace.
const allowancePrefix = "approval/"

// readAlways decodes the "always" allowance stored under key.
func readAlways(key string, value []byte) Allowance {
	al := Allowance{Key: key}
	var v alwaysValue
	if len(value) > 0 && value[0] == '{' && json.Unmarshal(value, &v) == nil && v.Action != "" {
		al.Capsule, al.Action, al.Resource, al.Since = v.Capsule, v.Action, v.Resource, v.Since
		return al
	}
	// An old value: the decision alone. The key still names the capsule.
	al.Capsule, _, _ = strings.Cut(strings.TrimPrefix(key, allowancePrefix), "/")
	al.Unnamed = true
	return al
}

// Allowances lists principal's standing allowances of the host approval
// call: this kernel's "this session" ones, then the "always" ones of st,
// each sorted by key. Another principal's are never among them.
func (a *Approvals) Allowances(st *store.Store, principal string) ([]Allowance, error) {
	a.mu.Lock()
	out := make([]Allowance, 0, len(a.session[principal]))
	for _, al := range a.session[principal] {
		out = append(out, al)
	}
	a.mu.Unlock()
	slices.SortFunc(out, func(x, y Allowance) int { return strings.Compare(x.Key, y.Key) })
	if st == nil {
		return out, nil
	}
	kv := st.KV(principal, approvalsNamespace)
	keys, err := kv.List(allowancePrefix)
	if err != nil {
		return out, fmt.Errorf("the always allowances of %s: %w", principal, err)
	}
	slices.Sort(keys)
	for _, key := range keys {
		v, ok, err := kv.Get(key)
		if err != nil {
			return out, fmt.Errorf("the always allowance %s of %s: %w", key, principal, err)
		}
		if ok {
			out = append(out, readAlways(key, v))
		}
	}
	return out, nil
}

// Revoke withdraws principal's allowance key ("this session" or "always"
// by session): the next request for it is asked about again. It reports
// whether there was one.
func (a *Approvals) Revoke(st *store.Store, principal, key string, session bool) (bool, error) {
	if session {
		a.mu.Lock()
		defer a.mu.Unlock()
		_, ok := a.session[principal][key]
		delete(a.session[principal], key)
		if len(a.session[principal]) == 0 {
			delete(a.session, principal)
		}
		return ok, nil
	}
	if st == nil || !strings.HasPrefix(key, allowancePrefix) {
		return false, nil
	}
	kv := st.KV(principal, approvalsNamespace)
	_, ok, err := kv.Get(key)
	if err != nil || !ok {
		return false, err
	}
	if err := kv.Delete(key); err != nil {
		return false, fmt.Errorf("revoke the always allowance %s of %s: %w", key, principal, err)
	}
	return true, nil
}
