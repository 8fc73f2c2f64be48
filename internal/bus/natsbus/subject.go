package natsbus

import (
	"errors"
	"fmt"
	"strings"

	"github.com/astrid-go/astrid/ipc"
)

// SubjectPrefix is the first token of every subject the transport uses: an
// Astrid bus shares a NATS account with nothing else's subjects.
const SubjectPrefix = "astrid"

// ErrUnmappable is wrapped by every error of a topic, pattern or capsule id
// NATS cannot carry.
var ErrUnmappable = errors.New("natsbus: cannot travel on NATS")

// PublishGrant is the subject pattern a capsule's connection may publish
// on for one [publish] key: astrid.<capsule id>.<key mapped>.
func PublishGrant(capsuleID, key string) (string, error) {
	if err := checkCapsuleID(capsuleID); err != nil {
		return "", err
	}
	mapped, err := MapPattern(key)
	if err != nil {
		return "", err
	}
	return SubjectPrefix + "." + capsuleID + "." + mapped, nil
}

// SubscribeGrant is the subject pattern a capsule may subscribe to for one
// [subscribe] key: astrid.*.<key mapped>, whoever publishes.
func SubscribeGrant(key string) (string, error) {
	mapped, err := MapPattern(key)
	if err != nil {
		return "", err
	}
	return SubjectPrefix + ".*." + mapped, nil
}

// MapPattern maps a topic pattern (a subscription or an ACL key) to a NATS
// subject pattern (DESIGN §9): a trailing `*` after at least one segment
// matches one or more segments, so it becomes `>`; any other `*` matches one
// segment, as NATS's `*` does. A pattern that ipc refuses, or that has a
// token NATS gives another meaning, is refused with ErrUnmappable.
func MapPattern(pattern string) (string, error) {
	if err := checkTokens(pattern, true); err != nil {
		return "", fmt.Errorf("%w: pattern %q: %w", ErrUnmappable, pattern, err)
	}
	if strings.HasSuffix(pattern, ".*") {
		return pattern[:len(pattern)-1] + ">", nil
	}
	return pattern, nil
}

// ParseSubject reads the publishing capsule and the topic from a subject
// Forward made (astrid.<capsule id>.<topic>). It refuses anything else, including the kernel's
// reserved id: kernel events never travel (each host's kernel speaks for
// itself), so a subject naming it is forged.
func ParseSubject(subject string) (capsuleID, topic string, err error) {
	rest, ok := strings.CutPrefix(subject, SubjectPrefix+".")
	if !ok {
		return "", "", fmt.Errorf("%w: subject %q does not start with %q", ErrUnmappable, subject, SubjectPrefix+".")
	}
	capsuleID, topic, ok = strings.Cut(rest, ".")
	if !ok {
		return "", "", fmt.Errorf("%w: subject %q has no topic after the capsule id", ErrUnmappable, subject)
	}
	if err := checkCapsuleID(capsuleID); err != nil {
		return "", "", err
	}
	if err := checkTokens(topic, false); err != nil {
		return "", "", fmt.Errorf("%w: subject %q: %w", ErrUnmappable, subject, err)
	}
	return capsuleID, topic, nil
}

// checkCapsuleID refuses an id that is not one plain token: it sits between
// the prefix and the topic, where a dot or a wildcard would let one
// capsule's grant cover another's subjects.
func checkCapsuleID(id string) error {
	if id == ipc.KernelSourceID {
		return fmt.Errorf("%w: %q is the kernel's id; kernel events stay on their host", ErrUnmappable, id)
	}
	if err := ipc.ValidateTopic(id); err != nil || strings.Contains(id, ".") {
		return fmt.Errorf("%w: capsule id %q must be one topic segment", ErrUnmappable, id)
	}
	return nil
}

// checkTokens holds s to the topic rules of ipc (which DESIGN §4b chose so
// that topics map onto subjects) and then, independently, to what a NATS
// subject token may hold, so that a future widening of the topic rules
// cannot silently produce a subject NATS reads differently.
func checkTokens(s string, wildcards bool) error {
	var err error
	if wildcards {
		err = ipc.ValidatePattern(s)
	} else {
		err = ipc.ValidateTopic(s)
	}
	if err != nil {
		return err
	}
	for tok := range strings.SplitSeq(s, ".") {
		if tok == "*" {
			continue // ipc allowed it only where wildcards are
		}
		for i := 0; i < len(tok); i++ {
			if c := tok[i]; c <= ' ' || c >= 0x7f || c == '*' || c == '>' {
				return fmt.Errorf("token %q holds %q, which NATS does not carry in a subject token", tok, c)
			}
		}
	}
	return nil
}
