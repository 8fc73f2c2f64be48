package ask

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/caps"
	"github.com/astrid-go/astrid/internal/store"
	"github.com/astrid-go/astrid/ipc"
)

// DefaultApprovalWindow is how long a question of the approval call waits
// for an answer (spec/capsules-cli.md §5.5: 60 s).
const DefaultApprovalWindow = 60 * time.Second

// approvalsNamespace is the KV namespace (per principal) of the "always"
// allowances: the kernel's reserved id, which no capsule can take, so no
// capsule's KV can read or forge them.
const approvalsNamespace = ipc.KernelSourceID

// Approvals is the kernel-wide state of the host approval call.
type Approvals struct {
	// approvers are the source ids whose answers count: the kernel's
	// frontends (their ids are reserved against capsules), never a
	// capsule that was merely granted the response topics.
	approvers []string
	window    time.Duration

	mu sync.Mutex
	// session holds the approve_session allowances, by principal and
	// allowance key, for the life of the kernel: what was approved and
	// when (allowances.go lists and revokes them).
	session map[string]map[string]Allowance
	// tokens, when set (UseTokens), keeps "this session" and "always" as
	// capability tokens signed with the host key instead: the kernel's.
	tokens *caps.Book
}

// UseTokens makes the standing allowances capability tokens kept in book
// (DESIGN §13): an "always" edited in the store is then ignored, and
// `astrid caps revoke` withdraws one at once. Call it before any request.
func (a *Approvals) UseTokens(book *caps.Book) { a.tokens = book }

// NewApprovals returns the approval state: answers count from approvers;
// a question waits window (DefaultApprovalWindow when 0).
func NewApprovals(approvers []string, window time.Duration) *Approvals {
	if window <= 0 {
		window = DefaultApprovalWindow
	}
	return &Approvals{approvers: slices.Clone(approvers), window: window, session: map[string]map[string]Allowance{}}
}

func (a *Approvals) sessionAllowed(principal, key string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, ok := a.session[principal][key]
	return ok
}

func (a *Approvals) allowSession(principal, key string, al Allowance) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.session[principal] == nil {
		a.session[principal] = map[string]Allowance{}
	}
	al.Key, al.Session = key, true
	a.session[principal][key] = al
}

// allowanceKey names an allowance of capsule for exactly action on
// resource: never more than the person was asked about.
func allowanceKey(capsule, action, resource string) string {
	sum := sha256.Sum256([]byte(capsule + "\x00" + action + "\x00" + resource))
	return "approval/" + capsule + "/" + hex.EncodeToString(sum[:])
}

// Request is the host approval call (hostapi.Approval) for s: whether the
// asking capsule may do action on resource. A "this session" or "always"
// allowance of exactly that answers at once; otherwise the person is asked,
// and what they approve for longer is kept (the "always" ones in st, under
// the kernel's reserved namespace of the principal).
func (a *Approvals) Request(s Asker, st *store.Store, action, resource string) (bool, error) {
	const op = "approval"
	action = strings.TrimSpace(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, action))
	if action == "" || len(action) > ipc.MaxApprovalAction {
		return false, hostapi.Errorf(hostapi.CodeInvalid, op, "an action is 1 to %d bytes, not %d", ipc.MaxApprovalAction, len(action))
	}
	resource = strings.TrimSpace(resource)
	key := allowanceKey(s.Capsule, action, resource)
	if a.tokens != nil {
		if _, ok, err := a.tokens.CheckAction(s.Principal, s.Capsule, action, resource); err != nil {
			return false, hostapi.Errorf(hostapi.CodeUnavailable, op, "allowances: %v", err)
		} else if ok {
			return true, nil
		}
	} else if a.sessionAllowed(s.Principal, key) {
		return true, nil
	}
	always := st.KV(s.Principal, approvalsNamespace)
	if a.tokens != nil {
		// An "always" kept before tokens is unsigned: listed, never honoured.
	} else if _, ok, err := always.Get(key); err != nil {
		return false, hostapi.Errorf(hostapi.CodeUnavailable, op, "allowances: %v", err)
	} else if ok {
		return true, nil
	}
	decision, err := a.Ask(s, action, resource, fmt.Sprintf("Capsule '%s' requests approval", s.Capsule), false)
	if err != nil {
		return false, err
	}
	// What was approved, kept with the allowance so that a person can
	// see it and withdraw it (astrid approvals).
	given := Allowance{Capsule: s.Capsule, Action: action, Resource: ipc.ApprovalText(resource, ipc.MaxApprovalResource), Since: time.Now().UTC()}
	if a.tokens != nil && (decision == ipc.DecisionApproveSession || decision == ipc.DecisionApproveAlways) {
		kind := caps.KindAlways
		if decision == ipc.DecisionApproveSession {
			kind = caps.KindSession
		}
		if _, err := a.tokens.Mint(caps.Request{Kind: kind, Principal: s.Principal, Capsule: s.Capsule, Action: action, Pattern: caps.EscapePattern(resource)}); err != nil {
			// Approved all the same: the person said yes to this one.
			s.Log.Warn("approval: allowance not kept", "principal", s.Principal, "action", action, "err", err)
		}
		return true, nil
	}
	switch decision {
	case ipc.DecisionApproveSession:
		a.allowSession(s.Principal, key, given)
	case ipc.DecisionApproveAlways:
		if err := always.Set(key, alwaysRecord(decision, given)); err != nil {
			// Approved all the same: the person said yes to this one.
			s.Log.Warn("approval: allowance not kept", "principal", s.Principal, "action", action, "err", err)
		}
	case ipc.DecisionApprove:
	default:
		return false, nil
	}
	return true, nil
}

// Ask publishes an approval question as the kernel, for s's principal, and
// waits for the first answer from an approver frontend (or an uplink
// relaying its person's); it returns the decision, consulting and keeping
// no allowance. unconfined marks a question about running outside the
// sandbox, which frontends never answer from --yes.
func (a *Approvals) Ask(s Asker, action, resource, reason string, unconfined bool) (string, error) {
	const op = "approval"
	var raw [16]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", hostapi.Errorf(hostapi.CodeInternal, op, "request id: %v", err)
	}
	id := "appr-" + hex.EncodeToString(raw[:])
	q, err := ipc.ApprovalRequired{
		RequestID: id, Action: action, Resource: ipc.ApprovalText(resource, ipc.MaxApprovalResource),
		Reason: reason, CallID: s.CallID, Unconfined: unconfined,
	}.MarshalJSON()
	if err != nil {
		return "", hostapi.Errorf(hostapi.CodeInternal, op, "question: %v", err)
	}
	var decision string
	err = s.ask(question{
		op: op, id: id, topic: ipc.ApprovalRequestTopic, payload: q, answers: ipc.ApprovalResponseTopic(id),
		trusted: a.approvers, window: a.window,
		take: func(payload []byte) bool {
			var ans struct {
				RequestID string `json:"request_id"`
				Decision  string `json:"decision"`
			}
			if json.Unmarshal(payload, &ans) != nil || (ans.RequestID != "" && ans.RequestID != id) {
				s.Log.Warn("approval: ignored an answer that is not this question's", "request_id", id)
				return false
			}
			decision = ans.Decision
			return true
		},
	})
	return decision, err
}
