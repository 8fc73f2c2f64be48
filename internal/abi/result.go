package abi

// Version is the version of docs/abi.md this package implements.
const Version = 2

// errorFlag marks a packed result carrying an error record.
const errorFlag = uint64(1) << 63

// PackResult packs a pointer and a length (and the error flag) into the i64
// every ABI call returns.
func PackResult(ptr, n uint32, isErr bool) uint64 {
	v := uint64(n&0x7fffffff)<<32 | uint64(ptr)
	if isErr {
		v |= errorFlag
	}
	return v
}

// UnpackResult splits a packed result.
func UnpackResult(v uint64) (ptr, n uint32, isErr bool) {
	return uint32(v), uint32(v>>32) & 0x7fffffff, v&errorFlag != 0
}
