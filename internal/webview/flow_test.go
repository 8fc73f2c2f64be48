package webview

import (
	"strconv"
	"testing"
)

// Past maxNames, new names share otherName's row: its rate counts them
// as its total does.
func TestRatesFoldNamesPastTheBound(t *testing.T) {
	total := map[string]uint64{}
	first := map[string]uint64{}
	for i := range maxNames {
		first["t"+strconv.Itoa(i)] = 1
	}
	rates(first, total, 1)
	got := rates(map[string]uint64{"new-a": 6, "new-b": 4, "t0": 2}, total, 2)
	byName := map[string]Rate{}
	for _, r := range got {
		byName[r.Name] = r
	}
	if r := byName[otherName]; r.PerS != 5 || r.Total != 10 {
		t.Fatalf("%s: %+v, want 5/s of 10", otherName, r)
	}
	if r := byName["t0"]; r.PerS != 1 || r.Total != 3 {
		t.Fatalf("t0: %+v", r)
	}
	if len(got) != maxNames+1 {
		t.Fatalf("%d rows, want %d", len(got), maxNames+1)
	}
}
