package audit

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tamperCases are the ways the chain of "default" (five entries and the
// seal its writer's Close added, entry 6, which the checkpoint names) is altered; each must be reported naming the
// first bad entry. The CLI test runs the same cases through the binary.
var tamperCases = []struct {
	name    string
	edit    func(t *testing.T, dir string, lines [][]byte) [][]byte // nil result: file left as edited
	wantSeq uint64
	want    string
}{
	{"one byte of an entry edited", func(t *testing.T, dir string, ls [][]byte) [][]byte {
		ls[2] = bytes.Replace(ls[2], []byte(`"outcome":"ok"`), []byte(`"outcome":"ek"`), 1)
		return ls
	}, 4, "entry 3 edited"},
	{"one byte of the entry before the seal edited", func(t *testing.T, dir string, ls [][]byte) [][]byte {
		ls[4] = bytes.Replace(ls[4], []byte(`"outcome":"ok"`), []byte(`"outcome":"ek"`), 1)
		return ls
	}, 6, "entry 5 edited"},
	{"a signature byte edited", func(t *testing.T, dir string, ls [][]byte) [][]byte {
		i := bytes.LastIndex(ls[5], []byte(`"sig":"`)) + 8
		ls[5][i] ^= 1
		return ls
	}, 6, ""},
	{"a seal's signature removed", func(t *testing.T, dir string, ls [][]byte) [][]byte {
		i := bytes.LastIndex(ls[5], []byte(`,"sig":"`))
		ls[5] = append(ls[5][:i:i], "}\n"...)
		return ls
	}, 6, "seal without its signature"},
	{"whitespace added", func(t *testing.T, dir string, ls [][]byte) [][]byte {
		ls[3] = bytes.Replace(ls[3], []byte(`{"entry":{`), []byte(`{"entry": {`), 1)
		return ls
	}, 4, "canonical"},
	{"an entry removed", func(t *testing.T, dir string, ls [][]byte) [][]byte {
		return append(ls[:1:1], ls[2:]...)
	}, 3, "seq 3 where 2 was expected"},
	{"two entries swapped", func(t *testing.T, dir string, ls [][]byte) [][]byte {
		ls[1], ls[2] = ls[2], ls[1]
		return ls
	}, 3, "seq 3 where 2 was expected"},
	{"an entry repeated", func(t *testing.T, dir string, ls [][]byte) [][]byte {
		return append(ls[:2:2], append([][]byte{ls[1]}, ls[2:]...)...)
	}, 2, "seq 2 where 3 was expected"},
	{"an entry from another chain inserted", func(t *testing.T, dir string, ls [][]byte) [][]byte {
		other := openLog(t, t.TempDir(), newKey(t), nil)
		odir := other.opts.Dir
		appendN(t, other, "default", 2)
		other.Close()
		ols := readLines(t, ChainPath(odir, "default"))
		return append(ls[:1:1], append([][]byte{ols[1]}, ls[1:]...)...)
	}, 2, "prev hash does not match"},
	{"entries appended and sealed, linked, with another key", func(t *testing.T, dir string, ls [][]byte) [][]byte {
		odir := t.TempDir()
		os.MkdirAll(filepath.Dir(ChainPath(odir, "default")), 0o700)
		os.WriteFile(ChainPath(odir, "default"), bytes.Join(ls, nil), 0o600)
		other := openLog(t, odir, newKey(t), nil)
		appendN(t, other, "default", 1)
		other.Close()
		return readLines(t, ChainPath(odir, "default"))
	}, 8, "signature does not verify"},
	{"the last two entries and the seal cut off", func(t *testing.T, dir string, ls [][]byte) [][]byte {
		return ls[:3]
	}, 4, "truncated"},
	{"cut mid-entry", func(t *testing.T, dir string, ls [][]byte) [][]byte {
		ls[5] = ls[5][:20]
		return ls
	}, 6, "unfinished"},
	{"the whole chain removed", func(t *testing.T, dir string, ls [][]byte) [][]byte {
		os.Remove(ChainPath(dir, "default"))
		return nil
	}, 1, "truncated"},
	{"the checkpoint edited", func(t *testing.T, dir string, ls [][]byte) [][]byte {
		b, _ := os.ReadFile(CheckpointPath(dir, "default"))
		os.WriteFile(CheckpointPath(dir, "default"), bytes.Replace(b, []byte(`"seq":6`), []byte(`"seq":5`), 1), 0o600)
		return ls
	}, 0, "checkpoint's signature"},
	{"an entry moved from another chain", func(t *testing.T, dir string, ls [][]byte) [][]byte {
		return append(ls, readLines(t, ChainPath(dir, "bob"))[0])
	}, 1, "seq 1 where 7 was expected"},
}

func readLines(t *testing.T, path string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.SplitAfter(b, []byte("\n"))[:bytes.Count(b, []byte("\n"))]
}

func TestVerifyDetectsTampering(t *testing.T) {
	for _, tc := range tamperCases {
		t.Run(tc.name, func(t *testing.T) {
			dir, key := t.TempDir(), newKey(t)
			l := openLog(t, dir, key, nil)
			appendN(t, l, "default", 5)
			appendN(t, l, "bob", 1)
			l.Close()
			pub := key.Public().(ed25519.PublicKey)
			if _, err := VerifyChain(dir, "default", pub); err != nil {
				t.Fatal(err)
			}
			if ls := tc.edit(t, dir, readLines(t, ChainPath(dir, "default"))); ls != nil {
				os.WriteFile(ChainPath(dir, "default"), bytes.Join(ls, nil), 0o600)
			}
			err := Verify(dir, pub, nil)
			var p *Problem
			if !errors.As(err, &p) {
				t.Fatalf("verify: %v, want a Problem", err)
			}
			if p.Chain != "default" || p.Seq != tc.wantSeq || !strings.Contains(p.Reason, tc.want) {
				t.Fatalf("verify: %v (seq %d), want entry %d and %q", err, p.Seq, tc.wantSeq, tc.want)
			}
		})
	}
}
