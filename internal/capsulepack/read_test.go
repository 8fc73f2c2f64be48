package capsulepack

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// entry is one raw tar entry of a hand-made archive.
type entry struct {
	h    tar.Header
	body string
}

func reg(name, body string) entry {
	return entry{h: tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(body))}, body: body}
}

// rawArchive writes entries as they are, with a meta.json listing every
// regular file among them unless noMeta; sizes in headers are what the
// entries say.
func rawArchive(t testing.TB, noMeta bool, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	if !noMeta {
		m := Meta{Format: Format, Name: "x", Version: "0.1.0"}
		for _, e := range entries {
			if e.h.Typeflag == tar.TypeReg && int64(len(e.body)) == e.h.Size {
				m.Files = append(m.Files, FileDigest{Path: e.h.Name, SHA256: digest([]byte(e.body)), Size: e.h.Size})
			}
		}
		b, _ := json.Marshal(m)
		entries = append([]entry{reg(MetaFile, string(b))}, entries...)
	}
	for _, e := range entries {
		h := e.h
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatalf("%s: %v", h.Name, err)
		}
		if e.body != "" {
			if _, err := tw.Write([]byte(e.body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Close flushes padding; a short entry's error is expected.
	_ = tw.Flush()
	_ = tw.Close()
	_ = zw.Close()
	return buf.Bytes()
}

// Escape attempts and malformed archives: each refused with the error
// that names it, before anything is written anywhere.
func TestReadRefusesUnsafeArchives(t *testing.T) {
	manifest := reg("Capsule.toml", "[package]\nname = \"x\"\nversion = \"0.1.0\"\n")
	link := func(typ byte, name, target string) entry {
		return entry{h: tar.Header{Typeflag: typ, Name: name, Linkname: target, Mode: 0o777}}
	}
	for _, tc := range []struct {
		name    string
		entries []entry
		noMeta  bool
		want    error
		msg     string
	}{
		{name: "dot-dot", entries: []entry{manifest, reg("../evil", "x")}, want: ErrUnsafe, msg: `"../evil"`},
		{name: "dot-dot inside", entries: []entry{manifest, reg("a/../../evil", "x")}, want: ErrUnsafe},
		{name: "absolute", entries: []entry{manifest, reg("/etc/cron.d/evil", "x")}, want: ErrUnsafe, msg: "absolute path"},
		{name: "backslash", entries: []entry{manifest, reg(`..\evil`, "x")}, want: ErrUnsafe},
		{name: "dot", entries: []entry{manifest, reg("./Capsule.toml", "x")}, want: ErrUnsafe},
		{name: "empty element", entries: []entry{manifest, reg("a//b", "x")}, want: ErrUnsafe},
		{name: "symlink", entries: []entry{manifest, link(tar.TypeSymlink, "docs", "/etc")}, want: ErrUnsafe, msg: "not a regular file"},
		{name: "hard link", entries: []entry{manifest, link(tar.TypeLink, "passwd", "/etc/passwd")}, want: ErrUnsafe},
		{name: "directory", entries: []entry{manifest, {h: tar.Header{Typeflag: tar.TypeDir, Name: "d/", Mode: 0o755}}}, want: ErrUnsafe},
		{name: "device", entries: []entry{manifest, {h: tar.Header{Typeflag: tar.TypeChar, Name: "null", Devmajor: 1, Devminor: 3}}}, want: ErrUnsafe},
		{name: "fifo", entries: []entry{manifest, {h: tar.Header{Typeflag: tar.TypeFifo, Name: "fifo"}}}, want: ErrUnsafe},
		{name: "duplicate", entries: []entry{manifest, reg("a.md", "1"), reg("a.md", "2")}, want: ErrUnsafe, msg: "appears twice"},
		{name: "duplicate manifest", entries: []entry{manifest, manifest}, want: ErrUnsafe},
		{name: "duplicate by case", entries: []entry{manifest, reg("A.md", "1"), reg("a.md", "2")}, want: ErrUnsafe},
		{name: "file then directory", entries: []entry{manifest, reg("a", "1"), reg("a/b", "2")}, want: ErrUnsafe},
		{name: "directory then file", entries: []entry{manifest, reg("a/b", "1"), reg("a", "2")}, want: ErrUnsafe},
		{name: "10 GiB declared", entries: []entry{manifest, {h: tar.Header{Typeflag: tar.TypeReg, Name: "big", Size: 10 << 30}}}, want: ErrTooLarge, msg: "declares 10737418240 bytes"},
		{name: "truncated", entries: []entry{manifest, {h: tar.Header{Typeflag: tar.TypeReg, Name: "short", Size: 100}, body: "only this"}}, want: ErrMalformed},
		{name: "no meta.json", noMeta: true, entries: []entry{manifest}, want: ErrMalformed},
		{name: "no manifest", entries: []entry{reg("a.md", "1")}, want: ErrMalformed},
		{name: "not listed", noMeta: true, entries: []entry{reg(MetaFile, `{"format":"astrid-capsule/1","name":"x","version":"1.0.0","files":[]}`), manifest}, want: ErrDigest, msg: "not listed"},
		{name: "listed twice", noMeta: true, entries: []entry{reg(MetaFile, `{"format":"astrid-capsule/1","name":"x","version":"1.0.0","files":[{"path":"Capsule.toml","sha256":"sha256:x","size":1},{"path":"Capsule.toml","sha256":"sha256:x","size":1}]}`), manifest}, want: ErrDigest},
		{name: "listed, absent", noMeta: true, entries: []entry{reg(MetaFile, `{"format":"astrid-capsule/1","name":"x","version":"1.0.0","files":[{"path":"gone","sha256":"sha256:x","size":1}]}`), manifest}, want: ErrDigest},
		{name: "other format", noMeta: true, entries: []entry{reg(MetaFile, `{"format":"zip","name":"x","version":"1"}`), manifest}, want: ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(bytes.NewReader(rawArchive(t, tc.noMeta, tc.entries...)), Limits{})
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("Read: %v, want %v with %q", err, tc.want, tc.msg)
			}
		})
	}
}

func TestReadRefusesTamperedAndOversized(t *testing.T) {
	p, err := Pack(capsuleDir(t, ""))
	if err != nil {
		t.Fatal(err)
	}
	// One byte of a packed file changed (the archive re-written around it).
	a := mustRead(t, p.Bytes)
	a.Files["docs/notes.md"] = []byte("Remember")
	tampered, err := write(a.MetaJSON, a.Files, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Read(bytes.NewReader(tampered), Limits{}); !errors.Is(err, ErrDigest) || !strings.Contains(err.Error(), "docs/notes.md") {
		t.Fatalf("tampered file: %v", err)
	}
	// One byte of the compressed stream flipped: gzip's CRC or the digests.
	for i := len(p.Bytes) / 3; i < len(p.Bytes); i += len(p.Bytes) / 5 {
		b := bytes.Clone(p.Bytes)
		b[i] ^= 0x20
		if _, err := Read(bytes.NewReader(b), Limits{}); err == nil {
			t.Fatalf("flipping byte %d went unnoticed", i)
		}
	}
	if _, err := Read(bytes.NewReader(p.Bytes), Limits{MaxBytes: 10}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("over MaxBytes: %v", err)
	}
	if _, err := Read(bytes.NewReader(p.Bytes), Limits{MaxFiles: 2}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("over MaxFiles: %v", err)
	}
	if _, err := Read(strings.NewReader("not gzip"), Limits{}); !errors.Is(err, ErrMalformed) {
		t.Fatalf("not gzip: %v", err)
	}
}

// FuzzRead: no input panics Read, and whatever it accepts extracts inside
// the destination only, as regular files.
func FuzzRead(f *testing.F) {
	p, err := Pack(capsuleDir(f, ""))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(p.Bytes)
	manifest := reg("Capsule.toml", "[package]\nname = \"x\"\nversion = \"0.1.0\"\n")
	f.Add(rawArchive(f, false, manifest, reg("../evil", "x")))
	f.Add(rawArchive(f, false, manifest, reg("a", "1"), reg("a/b", "2")))
	f.Add(rawArchive(f, false, manifest, entry{h: tar.Header{Typeflag: tar.TypeSymlink, Name: "l", Linkname: "/"}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := Read(bytes.NewReader(b), Limits{MaxBytes: 1 << 20, MaxFiles: 64})
		if err != nil {
			return
		}
		parent := t.TempDir()
		dst := filepath.Join(parent, "dst")
		if err := os.Mkdir(dst, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := a.Extract(dst); err != nil {
			t.Fatalf("accepted archive does not extract: %v", err)
		}
		err = filepath.WalkDir(parent, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if p != parent && p != dst && !strings.HasPrefix(p, dst+string(filepath.Separator)) {
				t.Errorf("extract wrote %s outside %s", p, dst)
			}
			if !d.IsDir() && !d.Type().IsRegular() {
				t.Errorf("extract made %s, not a regular file", p)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}
