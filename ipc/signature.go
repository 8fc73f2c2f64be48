package ipc

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// Signature serialises as upstream's Option<Vec<u8>>: an array of byte
// numbers, or null when absent (never base64, which encoding/json would pick
// for a []byte).
type Signature []byte

// MarshalJSON writes null or an array of numbers.
func (s Signature) MarshalJSON() ([]byte, error) {
	if s == nil {
		return []byte("null"), nil
	}
	out := make([]byte, 0, 2+4*len(s))
	out = append(out, '[')
	for i, b := range s {
		if i > 0 {
			out = append(out, ',')
		}
		out = strconv.AppendUint(out, uint64(b), 10)
	}
	return append(out, ']'), nil
}

// UnmarshalJSON reads null or an array of numbers 0..255.
func (s *Signature) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		*s = nil
		return nil
	}
	var nums []int
	if err := json.Unmarshal(data, &nums); err != nil {
		return fmt.Errorf("signature: %w", err)
	}
	out := make(Signature, len(nums))
	for i, n := range nums {
		if n < 0 || n > 255 {
			return fmt.Errorf("signature: byte %d out of range: %d", i, n)
		}
		out[i] = byte(n)
	}
	*s = out
	return nil
}
