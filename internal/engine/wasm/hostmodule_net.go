package wasm

import (
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/tetratelabs/wazero/api"
)

// netImports are the socket calls of docs/abi.md §5 (net).
var netImports = []importDef{
	{name: "net_connect", params: p(3), fn: func(st *callState, mod api.Module, s []uint64) ([]byte, error) {
		host, err := arg(mod, s[0], s[1], "host")
		if err != nil {
			return nil, err
		}
		h, err := st.call.NetConnect(string(host), int(int32(s[2])))
		return u64(uint64(h)), err
	}},
	{name: "net_bind", params: p(2), fn: func(st *callState, mod api.Module, s []uint64) ([]byte, error) {
		addr, err := arg(mod, s[0], s[1], "address")
		if err != nil {
			return nil, err
		}
		l, err := st.call.NetBind(string(addr))
		if err != nil {
			return nil, err
		}
		return jsonOf(l)
	}},
	{name: "net_accept", params: []api.ValueType{i64, i64}, fn: func(st *callState, _ api.Module, s []uint64) ([]byte, error) {
		st.recvs.Add(1) // a wait in the host: a run loop's progress
		c, err := st.call.NetAccept(hostapi.NetHandle(s[0]), netTimeout(s[1]))
		if err != nil {
			return nil, err
		}
		return jsonOf(c)
	}},
	{name: "net_read", params: []api.ValueType{i64, i64, i64}, fn: func(st *callState, _ api.Module, s []uint64) ([]byte, error) {
		st.recvs.Add(1) // a wait in the host: a run loop's progress
		// Clamped here so no guest value overflows int: the host caps a
		// read at MaxNetRead anyway.
		maxBytes := int64(s[1])
		if maxBytes > hostapi.MaxNetRead {
			maxBytes = hostapi.MaxNetRead
		}
		return st.call.NetRead(hostapi.NetHandle(s[0]), int(maxBytes), netTimeout(s[2]))
	}},
	{name: "net_write", params: []api.ValueType{i64, i32, i32}, fn: func(st *callState, mod api.Module, s []uint64) ([]byte, error) {
		if uint32(s[2]) > hostapi.MaxNetWrite {
			return nil, hostapi.Errorf(hostapi.CodeTooLarge, "net_write", "%d bytes is over the %d-byte limit of one write", uint32(s[2]), hostapi.MaxNetWrite)
		}
		data, err := arg(mod, s[1], s[2], "data")
		if err != nil {
			return nil, err
		}
		return nil, st.call.NetWrite(hostapi.NetHandle(s[0]), data)
	}},
	{name: "net_close", params: []api.ValueType{i64}, fn: func(st *callState, _ api.Module, s []uint64) ([]byte, error) {
		return nil, st.call.NetClose(hostapi.NetHandle(s[0]))
	}},
}

// netTimeout reads a guest's timeout_ms: 0 (the host's MaxNetWait) when it
// is not positive or over that cap.
func netTimeout(ms uint64) time.Duration {
	v := int64(ms)
	if v <= 0 || v > hostapi.MaxNetWait.Milliseconds() {
		return 0
	}
	return time.Duration(v) * time.Millisecond
}

func init() { registerImports(netImports) }
