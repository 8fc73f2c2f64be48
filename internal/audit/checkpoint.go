package audit

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/astrid-go/astrid/internal/atomicfile"
)

// Checkpoint is a signed statement that a chain held entry Seq, whose
// hash was Hash, at Time. It lives beside the chain and is replaced
// whole, so cutting entries off the chain's end leaves a checkpoint
// naming an entry that is no longer there.
type Checkpoint struct {
	Chain string    `json:"chain"` // the principal, "" for the system chain
	Seq   uint64    `json:"seq"`
	Hash  string    `json:"hash"`
	Time  time.Time `json:"time"`
}

type checkpointLine struct {
	Checkpoint json.RawMessage `json:"checkpoint"`
	Sig        string          `json:"sig"`
}

// writeCheckpoint signs and stores that principal's chain holds entry seq
// with hash.
func writeCheckpoint(dir string, key ed25519.PrivateKey, principal string, seq uint64, hash string, now time.Time) error {
	body, err := json.Marshal(Checkpoint{Chain: principal, Seq: seq, Hash: hash, Time: now.UTC()})
	if err != nil {
		return fmt.Errorf("audit: checkpoint: %w", err)
	}
	sig := ed25519.Sign(key, append([]byte(checkpointContext), body...))
	out, err := json.Marshal(checkpointLine{Checkpoint: body, Sig: base64.StdEncoding.EncodeToString(sig)})
	if err != nil {
		return fmt.Errorf("audit: checkpoint: %w", err)
	}
	if err := atomicfile.Write(CheckpointPath(dir, principal), append(out, '\n'), 0o600); err != nil {
		return fmt.Errorf("audit: write checkpoint of %s: %w", chainLabel(principal), err)
	}
	return nil
}

// errNoCheckpoint reports a chain without a checkpoint file.
var errNoCheckpoint = errors.New("no checkpoint")

// ReadCheckpoint reads and checks principal's checkpoint against pub.
func ReadCheckpoint(dir, principal string, pub ed25519.PublicKey) (Checkpoint, error) {
	b, err := os.ReadFile(CheckpointPath(dir, principal))
	if errors.Is(err, os.ErrNotExist) {
		return Checkpoint{}, errNoCheckpoint
	}
	if err != nil {
		return Checkpoint{}, fmt.Errorf("read checkpoint: %w", err)
	}
	var l checkpointLine
	if err := json.Unmarshal(bytes.TrimSuffix(b, []byte("\n")), &l); err != nil {
		return Checkpoint{}, fmt.Errorf("checkpoint does not decode: %w", err)
	}
	sig, err := base64.StdEncoding.DecodeString(l.Sig)
	if err != nil || !ed25519.Verify(pub, append([]byte(checkpointContext), l.Checkpoint...), sig) {
		return Checkpoint{}, errors.New("checkpoint's signature does not verify with the host key")
	}
	var c Checkpoint
	if err := json.Unmarshal(l.Checkpoint, &c); err != nil {
		return Checkpoint{}, fmt.Errorf("checkpoint does not decode: %w", err)
	}
	if c.Chain != principal {
		return Checkpoint{}, fmt.Errorf("checkpoint is %s's, not %s's", chainLabel(c.Chain), chainLabel(principal))
	}
	return c, nil
}
