package jsonscan

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestPlainWordAgreesWithTheTable: a false "plain" would let a quote, a
// backslash, a control or a non-ASCII byte through unchecked. Every byte
// value in every lane, and random words.
func TestPlainWordAgreesWithTheTable(t *testing.T) {
	check := func(x uint64) {
		want := true
		for k := 0; k < 8; k++ {
			want = want && plain[byte(x>>(8*k))]
		}
		if got := plainWord(x); got != want {
			t.Fatalf("plainWord(%#016x) = %v, the table says %v", x, got, want)
		}
	}
	const filler = 0x6161616161616161 // "aaaaaaaa"
	for lane := 0; lane < 8; lane++ {
		for b := 0; b < 256; b++ {
			mask := uint64(0xff) << (8 * lane)
			check(filler&^mask | uint64(b)<<(8*lane))
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 1 << 16 {
		check(r.Uint64())
	}
}

// TestPlainPrefixStopsAtTheFirstByteThatNeedsALook, at every position, for
// strings and byte slices alike.
func TestPlainPrefixStopsAtTheFirstByteThatNeedsALook(t *testing.T) {
	for _, special := range []string{`"`, `\`, "\n", "\x00", "\x1f", "\x7f", "\xc3", "\xff"} {
		for n := 0; n < 40; n++ {
			s := strings.Repeat("a", n) + special + strings.Repeat("b", 9)
			want := n
			if special == "\x7f" { // DEL is printable ASCII for JSON: plain
				want = len(s)
			}
			if got := PlainPrefix(s); got != want {
				t.Fatalf("PlainPrefix(%q) = %d, want %d", s, got, want)
			}
			if got := PlainPrefix([]byte(s)); got != want {
				t.Fatalf("PlainPrefix([]byte(%q)) = %d, want %d", s, got, want)
			}
		}
	}
	if got := PlainPrefix(""); got != 0 {
		t.Fatalf("PlainPrefix(\"\") = %d", got)
	}
}

func FuzzPlainPrefix(f *testing.F) {
	f.Add([]byte("hello, world"))
	f.Add([]byte("tab\there"))
	f.Fuzz(func(t *testing.T, b []byte) {
		want := 0
		for want < len(b) && plain[b[want]] {
			want++
		}
		if got := PlainPrefix(b); got != want {
			t.Fatalf("PlainPrefix(%q) = %d, want %d", b, got, want)
		}
		if got := PlainPrefix(string(b)); got != want {
			t.Fatalf("PlainPrefix(string %q) = %d, want %d", b, got, want)
		}
	})
}

func BenchmarkPlainPrefix(b *testing.B) {
	s := strings.Repeat("abcdefgh", 64)
	bs := []byte(s)
	b.Run("string", func(b *testing.B) {
		b.SetBytes(int64(len(s)))
		for b.Loop() {
			PlainPrefix(s)
		}
	})
	b.Run("bytes", func(b *testing.B) {
		b.SetBytes(int64(len(bs)))
		for b.Loop() {
			PlainPrefix(bs)
		}
	})
}

// TestNoControlEveryLane: every byte value in every lane of a word, and in
// the tail, against the byte-by-byte rule.
func TestNoControlEveryLane(t *testing.T) {
	for _, filler := range []string{"\xc3", "a", " ", "\x7f"} {
		testNoControlWith(t, filler)
	}
}

func testNoControlWith(t *testing.T, filler string) {
	for n := 1; n <= 17; n++ {
		for pos := 0; pos < n; pos++ {
			for c := 0; c < 256; c++ {
				b := []byte(strings.Repeat(filler, n))
				b[pos] = byte(c)
				want := true
				for _, x := range b {
					want = want && x >= 0x20
				}
				if got := noControl(b); got != want {
					t.Fatalf("noControl(%q) = %v, want %v", b, got, want)
				}
			}
		}
	}
}
