package caps

import "testing"

// One standing token checked, as the approval layer does on every call of
// a mutable tool: the store read, the signature and the judgement.
func BenchmarkCheck(b *testing.B) {
	bk, _, _ := newBook(b)
	if _, err := bk.Mint(Request{Kind: KindAlways, Principal: "default", Capsule: "astrid-capsule-fs", Tool: "write_file"}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, ok, err := bk.Check("default", "astrid-capsule-fs", "write_file", `{"file_path":"a"}`); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}
