package store

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Check passes a sound file and names the damage in one whose pages were
// overwritten (a disk error, a bad copy), where Open alone does not notice.
func TestCheckFindsDamagedPages(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	kv := s.KV("default", "notes")
	pad := strings.Repeat("p", 400)
	for i := range 200 {
		if err := kv.Set(fmt.Sprintf("key-%04d", i), []byte(fmt.Sprintf("value %d %s", i, pad))); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Check(); err != nil {
		t.Fatalf("a sound file: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := f.Stat()
	junk := make([]byte, 4096)
	for i := range junk {
		junk[i] = 0xA5
	}
	// Past the two meta pages and the freelist: branch and leaf pages.
	for off := int64(4 * 4096); off < fi.Size()/2; off += 4 * 4096 {
		if _, err := f.WriteAt(junk, off); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()
	s, err = Open(path, Options{})
	if err != nil {
		t.Fatalf("Open reads only the meta pages, which are intact: %v", err)
	}
	defer s.Close()
	if err := s.Check(); err == nil {
		t.Fatal("Check passed a file with overwritten pages")
	} else {
		t.Logf("Check: %.300v", err)
	}
}
