package audit

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"sync"
)

// Problem is the first bad place verify found in a chain.
type Problem struct {
	Chain  string // the principal, "" for the system chain
	Line   int    // the chain file's line, from 1 (0: the chain as a whole)
	Seq    uint64 // the entry's seq where it decoded, or the one expected
	Reason string
}

func (p *Problem) Error() string {
	where := chainLabel(p.Chain)
	if p.Line > 0 {
		return fmt.Sprintf("%s: entry %d (line %d of %s): %s", where, p.Seq, p.Line, ChainPathBase(p.Chain), p.Reason)
	}
	return fmt.Sprintf("%s: %s", where, p.Reason)
}

// ChainPathBase names principal's chain file relative to the audit
// directory.
func ChainPathBase(principal string) string {
	if principal == "" {
		return systemName + logExt
	}
	return chainsDir + "/" + principal + logExt
}

// Summary is what verify found in one good chain.
type Summary struct {
	Chain string
	// Entries is the chain's length (its last seq), seals included.
	Entries uint64
	// Sealed is the seq of the last signed entry: every entry up to it
	// is vouched for by a signature. Entries after it are linked but not
	// yet signed (a writer seals within 10 ms, and when it closes; one
	// killed leaves them so until the next writer seals the chain).
	Sealed uint64
	// Seals counts the signed entries.
	Seals uint64
	// Checkpoint is the seq the chain's checkpoint names (0: none).
	Checkpoint uint64
	// Adopted are the ranges of entries (first, last) whose writer
	// stopped before sealing them, sealed later by another writer: until
	// then, someone able to write the file could have changed them.
	Adopted [][2]uint64
}

// Unsealed is how many entries follow the last signed one.
func (s Summary) Unsealed() uint64 { return s.Entries - s.Sealed }

// VerifyChain streams principal's chain in dir and checks every entry
// against pub: it decodes strictly, its seq is one more than the entry
// before, its prev is that entry's hash, it is in its own principal's
// chain, its time does not go back, and where it is signed (a seal) the
// signature verifies, vouching for every entry before it. Then the
// checkpoint: its signature verifies and the chain still holds the entry
// it names, with that hash. The first failure is returned as a *Problem;
// entries after the last signed one are reported in the Summary.
func VerifyChain(dir, principal string, pub ed25519.PublicKey) (Summary, error) {
	sum := Summary{Chain: principal}
	bad := func(line int, seq uint64, format string, args ...any) error {
		return &Problem{Chain: principal, Line: line, Seq: seq, Reason: fmt.Sprintf(format, args...)}
	}
	ckpt, ckErr := ReadCheckpoint(dir, principal, pub)
	if ckErr != nil && !errors.Is(ckErr, errNoCheckpoint) {
		return sum, &Problem{Chain: principal, Reason: ckErr.Error()}
	}
	s, err := OpenScanner(dir, principal)
	if err != nil {
		return sum, err
	}
	defer s.Close()
	prevHash, prev := Genesis, Entry{}
	// Signatures, the costly part, are checked a batch at a time on every
	// core; the links, in order, after. The first bad entry is reported
	// whichever check finds it.
	var batch []Record
	var lines []int
	check := func() error {
		ok := verifySigs(pub, batch)
		for i, r := range batch {
			e := r.Entry
			want := prev.Seq + 1
			switch {
			case e.Seq != want:
				return bad(lines[i], e.Seq, "seq %d where %d was expected (an entry removed, reordered or inserted)", e.Seq, want)
			case e.Prev != prevHash:
				return bad(lines[i], e.Seq, "prev hash does not match entry %d's hash (entry %d edited, or an entry inserted)", prev.Seq, prev.Seq)
			case r.Signed() && !ok[i]:
				return bad(lines[i], e.Seq, "signature does not verify with the host key (edited, or not written by this host)")
			case e.Principal != principal:
				return bad(lines[i], e.Seq, "entry is %s's, not this chain's (moved between chains)", chainLabel(e.Principal))
			case e.Time.Before(prev.Time):
				return bad(lines[i], e.Seq, "time %s is before entry %d's %s (the writer never goes back)", e.Time, prev.Seq, prev.Time)
			}
			if ckErr == nil && e.Seq == ckpt.Seq && r.Hash != ckpt.Hash {
				return bad(lines[i], e.Seq, "hash differs from the one the checkpoint of %s signed (the chain was rewritten)", ckpt.Time)
			}
			prevHash, prev = r.Hash, e
			sum.Entries = e.Seq
			if r.Signed() {
				if v, ok := e.Detail[AdoptedThrough]; ok {
					if to, err := strconv.ParseUint(v, 10, 64); err == nil && to > sum.Sealed && to < e.Seq {
						sum.Adopted = append(sum.Adopted, [2]uint64{sum.Sealed + 1, to})
					}
				}
				sum.Sealed = e.Seq
				sum.Seals++
			}
		}
		batch, lines = batch[:0], lines[:0]
		return nil
	}
	for s.Next() {
		batch, lines = append(batch, s.Record()), append(lines, s.Line())
		if len(batch) == verifyBatch {
			if err := check(); err != nil {
				return sum, err
			}
		}
	}
	if err := check(); err != nil {
		return sum, err
	}
	if err := s.Err(); err != nil {
		return sum, bad(s.Line(), prev.Seq+1, "%v", err)
	}
	if ckErr == nil {
		sum.Checkpoint = ckpt.Seq
		if sum.Entries < ckpt.Seq {
			return sum, &Problem{Chain: principal, Line: s.Line() + 1, Seq: sum.Entries + 1,
				Reason: fmt.Sprintf("missing: the chain ends at entry %d but the checkpoint signed at %s names entry %d (truncated)", sum.Entries, ckpt.Time, ckpt.Seq)}
		}
	}
	return sum, nil
}

// Verify checks every chain in dir, calling fn with each good chain's
// summary, and returns the first Problem.
func Verify(dir string, pub ed25519.PublicKey, fn func(Summary)) error {
	ps, err := Chains(dir)
	if err != nil {
		return err
	}
	for _, p := range ps {
		sum, err := VerifyChain(dir, p, pub)
		if err != nil {
			return err
		}
		if fn != nil {
			fn(sum)
		}
	}
	return nil
}

// verifyBatch is how many entries share one round of parallel signature
// checks.
const verifyBatch = 512

// verifySigs checks the signatures of rs's signed records on every core.
func verifySigs(pub ed25519.PublicKey, rs []Record) []bool {
	ok := make([]bool, len(rs))
	var signed []int
	for i := range rs {
		if rs[i].Signed() {
			signed = append(signed, i)
		}
	}
	workers := min(runtime.GOMAXPROCS(0), len(signed))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for j := w; j < len(signed); j += workers {
				ok[signed[j]] = rs[signed[j]].VerifySig(pub)
			}
		})
	}
	wg.Wait()
	return ok
}
