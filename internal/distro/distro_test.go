package distro

import (
	"archive/tar"
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestParseDistro(t *testing.T) {
	good := `[distro]
name = "mine"
version = "0.1.0"

[[capsule]]
name = "hello"
version = "^0.1"
source = "oci://localhost:5000/astrid/hello:0.1.0"

[[capsule]]
name = "notes"
source = "notes.capsule"
`
	d, err := Parse(FileName, []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if d.Distro.Name != "mine" || len(d.Capsules) != 2 || d.Capsules[0].Version != "^0.1" {
		t.Fatalf("parsed %+v", d)
	}
	for _, tc := range []struct{ text, want string }{
		{"[distro]\nname = \"x\"\nbogus = 1\n[[capsule]]\nname = \"a\"\nsource = \"s\"\n", "Distro.toml:3: unknown key distro.bogus"},
		{"[distro]\nname = \"x\"\n", "no [[capsule]]"},
		{"[distro]\nname = \"x\"\n[[capsule]]\nname = \"Bad\"\nsource = \"s\"\n", "Distro.toml:4: capsule[0]: name"},
		{"[distro]\nname = \"x\"\n[[capsule]]\nname = \"a\"\nsource = \"s\"\n[[capsule]]\nname = \"a\"\nsource = \"t\"\n", "listed twice"},
		{"[distro]\nname = \"x\"\n[[capsule]]\nname = \"a\"\nversion = \"nope\"\nsource = \"s\"\n", `version "nope"`},
		{"[distro]\nname = \"x\"\n[[capsule]]\nname = \"a\"\n", "has no source"},
		{"[distro]\nname = 1\n", "Distro.toml:2:"},
		{"[[capsule]]\nname = \"a\"\nsource = \"s\"\n", "[distro] needs a name"},
	} {
		if _, err := Parse(FileName, []byte(tc.text)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q): %v, want %q", tc.text, err, tc.want)
		}
	}
}

func sampleLock(t testing.TB, archives ...[]byte) ([]byte, map[string][]byte) {
	t.Helper()
	l := &Lock{Distro: Header{Name: "mine", Version: "0.1.0"}}
	m := map[string][]byte{}
	for i, a := range archives {
		d := digest(a)
		m[d] = a
		l.Capsules = append(l.Capsules, Locked{Name: string(rune('a' + i)), Version: "0.1.0", Source: "x.capsule", Digest: d})
	}
	b, err := l.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b, m
}

func TestLockRoundTripAndRefusals(t *testing.T) {
	data, _ := sampleLock(t, []byte("one"), []byte("two"))
	l, err := ParseLock(LockName, data)
	if err != nil || len(l.Capsules) != 2 || l.Capsules[1].Digest != digest([]byte("two")) {
		t.Fatalf("round trip: %+v, %v", l, err)
	}
	bad := strings.Replace(string(data), l.Capsules[0].Digest, "sha256:abc", 1)
	if _, err := ParseLock(LockName, []byte(bad)); err == nil || !strings.Contains(err.Error(), "is not sha256:") {
		t.Fatalf("short digest: %v", err)
	}
	if _, err := ParseLock(LockName, []byte("[distro]\nname = \"x\"\n")); err == nil {
		t.Fatal("an empty lock parsed")
	}
}

func TestBundleRoundTripIsDeterministic(t *testing.T) {
	data, archives := sampleLock(t, []byte("archive one"), []byte("archive two"))
	var a, b bytes.Buffer
	if err := WriteBundle(&a, data, archives); err != nil {
		t.Fatal(err)
	}
	if err := WriteBundle(&b, data, archives); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("the same bundle twice gave different bytes")
	}
	got, err := ReadBundle(bytes.NewReader(a.Bytes()), 1<<20)
	if err != nil || len(got.Archives) != 2 || len(got.Lock.Capsules) != 2 {
		t.Fatalf("ReadBundle: %+v, %v", got, err)
	}
	delete(archives, digest([]byte("archive two")))
	if err := WriteBundle(&b, data, archives); err == nil {
		t.Fatal("a bundle missing an archive was written")
	}
}

type ent struct {
	name, body string
	typ        byte
	size       int64
}

func rawBundle(entries ...ent) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		typ, size := e.typ, e.size
		if typ == 0 {
			typ = tar.TypeReg
		}
		if size == 0 {
			size = int64(len(e.body))
		}
		_ = tw.WriteHeader(&tar.Header{Typeflag: typ, Name: e.name, Size: size, Mode: 0o644, Linkname: "x"})
		_, _ = tw.Write([]byte(e.body))
	}
	_ = tw.Flush()
	return buf.Bytes()
}

func TestReadBundleRefuses(t *testing.T) {
	one := "archive one"
	data, _ := sampleLock(t, []byte(one))
	lock := string(data)
	name := archivePrefix + strings.TrimPrefix(digest([]byte(one)), "sha256:") + archiveSuffix
	for _, tc := range []struct {
		name    string
		entries []ent
		want    string
	}{
		{"no lock", []ent{{name: name, body: one}}, "no Distro.lock"},
		{"missing archive", []ent{{name: LockName, body: lock}}, "no archive for capsule"},
		{"wrong digest", []ent{{name: LockName, body: lock}, {name: name, body: "archive 1"}}, "has digest"},
		{"extra archive", []ent{{name: LockName, body: lock}, {name: name, body: one}, {name: archivePrefix + strings.TrimPrefix(digest([]byte("x")), "sha256:") + archiveSuffix, body: "x"}}, "not in the lock"},
		{"path escape", []ent{{name: "../Distro.lock", body: lock}}, "unexpected entry"},
		{"symlink", []ent{{name: LockName, typ: tar.TypeSymlink}}, "not a regular file"},
		{"duplicate", []ent{{name: LockName, body: lock}, {name: LockName, body: lock}}, "appears twice"},
		{"huge", []ent{{name: LockName, size: 10 << 30}}, "past the"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadBundle(bytes.NewReader(rawBundle(tc.entries...)), 1<<20)
			if !errors.Is(err, ErrBundle) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ReadBundle: %v, want %q", err, tc.want)
			}
		})
	}
}

// FuzzReadBundle: no input panics the bundle reader, and what it accepts
// is consistent: every locked digest has its archive, with that digest.
func FuzzReadBundle(f *testing.F) {
	data, archives := sampleLock(f, []byte("archive one"))
	var buf bytes.Buffer
	if err := WriteBundle(&buf, data, archives); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add(rawBundle(ent{name: "../x", body: "y"}))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := ReadBundle(bytes.NewReader(b), 1<<20)
		if err != nil {
			return
		}
		for _, c := range got.Lock.Capsules {
			if a, ok := got.Archives[c.Digest]; !ok || digest(a) != c.Digest {
				t.Fatalf("accepted a bundle whose archive for %s does not match", c.Name)
			}
		}
	})
}
