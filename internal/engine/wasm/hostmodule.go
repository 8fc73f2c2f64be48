package wasm

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/abi"
	"github.com/astrid-go/astrid/internal/clock"
	"github.com/astrid-go/astrid/internal/host"
	"github.com/tetratelabs/wazero/api"
)

// hostModule is the import module of docs/abi.md §5.
const hostModule = "astrid"

// callState is what the imports of one call act on. It lives in its
// instance and is reused by each call.
type callState struct {
	eng  *Engine
	inst *instance
	// parent and principal describe the call in progress (parent is nil
	// between calls and in the run loop). Its host.Call is opened from them
	// on the guest's first import, so a handler that never reaches the host
	// never pays for one.
	parent    context.Context
	principal string
	call      *host.Call // nil until the first import (always set in the run loop)
	cctx      context.Context
	stopWatch func() bool // stops the interrupt on cctx; nil when not watching
	// host is the time spent inside imports, subtracted from the call's
	// wall time to give its guest time.
	host time.Duration
	// recvs counts the waits in the host (ipc_recv, net_accept, net_read):
	// the run loop's sign of progress.
	recvs atomic.Uint64
	buf   []byte
}

// begin readies the state for a call of principal under ctx.
func (st *callState) begin(ctx context.Context, principal string) {
	st.parent, st.principal = ctx, principal
	st.call, st.cctx, st.stopWatch, st.host = nil, nil, nil, 0
}

// hostCall is the call's host.Call, opened on first use. Its context ends
// when the call's cancel key is named; the guest is then interrupted, as
// wazero interrupts it when the deadline passes.
func (st *callState) hostCall() *host.Call {
	if st.call == nil && st.parent != nil {
		st.call, st.cctx = st.eng.host.Begin(st.parent, st.principal)
		st.stopWatch = context.AfterFunc(st.cctx, st.inst.interrupt)
	}
	return st.call
}

// end detaches the call from the state. It returns the host call (nil when
// the guest made no import), its context, and whether the guest was
// interrupted on its cancel key (then the instance is being closed and must
// not be reused, even if the call completed).
func (st *callState) end() (call *host.Call, cctx context.Context, interrupted bool) {
	call, cctx = st.call, st.cctx
	if st.stopWatch != nil {
		interrupted = !st.stopWatch()
	}
	st.parent, st.call, st.cctx, st.stopWatch = nil, nil, nil, nil
	return call, cctx, interrupted
}

var (
	i32 = api.ValueTypeI32
	i64 = api.ValueTypeI64
)

// importFn is one import's body: it reads its arguments from stack and
// answers bytes or an error, which the wrapper hands to the guest.
type importFn func(st *callState, mod api.Module, stack []uint64) ([]byte, error)

type importDef struct {
	name   string
	params []api.ValueType
	fn     importFn
	// outsideCall lets the import run from _initialize.
	outsideCall bool
}

// hostImportNames are the names a guest may import.
var hostImportNames = map[string]bool{"now": true}

func init() { registerImports(nil) }

// registerImports adds defs to the host module and their names to what a
// guest may import. Each area's file (hostmodule_<area>.go) calls it from
// its init; the literal above is registered by this file's, which runs
// first (files initialise in name order) and also lists the literal's
// names.
func registerImports(defs []importDef) {
	importDefs = append(importDefs, defs...)
	for _, d := range importDefs {
		hostImportNames[d.name] = true
	}
}

func p(n int) []api.ValueType {
	out := make([]api.ValueType, n)
	for i := range out {
		out[i] = i32
	}
	return out
}

var importDefs = []importDef{
	{name: "ipc_publish", params: p(4), fn: func(st *callState, mod api.Module, s []uint64) ([]byte, error) {
		topic, payload, err := twoArgs(mod, s, "topic", "payload")
		if err != nil {
			return nil, err
		}
		return nil, st.call.Publish(string(topic), payload)
	}},
	{name: "ipc_request", params: p(6), fn: func(st *callState, mod api.Module, s []uint64) ([]byte, error) {
		topic, payload, err := twoArgs(mod, s, "topic", "payload")
		if err != nil {
			return nil, err
		}
		raw, err := arg(mod, s[4], s[5], "request")
		if err != nil {
			return nil, err
		}
		var req hostapi.Request
		if err := json.Unmarshal(raw, &req); err != nil {
			return nil, hostapi.Errorf(hostapi.CodeInvalid, "ipc_request", "request is not the JSON of docs/abi.md: %v", err)
		}
		return nil, st.call.PublishRequest(string(topic), payload, req)
	}},
	{name: "ipc_reply", params: p(6), fn: func(st *callState, mod api.Module, s []uint64) ([]byte, error) {
		topic, corr, err := twoArgs(mod, s, "topic", "correlation id")
		if err != nil {
			return nil, err
		}
		payload, err := arg(mod, s[4], s[5], "payload")
		if err != nil {
			return nil, err
		}
		return nil, st.call.PublishReply(string(topic), string(corr), payload)
	}},
	{name: "ipc_serving", params: nil, fn: func(st *callState, _ api.Module, _ []uint64) ([]byte, error) {
		replyTo, corr := st.call.Serving()
		if corr == "" {
			return nil, nil
		}
		return jsonOf(hostapi.Request{ReplyTo: replyTo, CorrelationID: corr})
	}},
	{name: "ipc_subscribe", params: p(2), fn: func(st *callState, mod api.Module, s []uint64) ([]byte, error) {
		pattern, err := arg(mod, s[0], s[1], "pattern")
		if err != nil {
			return nil, err
		}
		id, err := st.call.Subscribe(string(pattern))
		return u64(uint64(id)), err
	}},
	{name: "ipc_recv", params: []api.ValueType{i64, i64}, fn: func(st *callState, _ api.Module, s []uint64) ([]byte, error) {
		st.recvs.Add(1)
		msg, err := st.call.Recv(hostapi.SubscriptionID(s[0]), time.Duration(int64(s[1]))*time.Millisecond)
		if err != nil {
			return nil, err
		}
		return encodeMessage(msg)
	}},
	{name: "ipc_poll", params: []api.ValueType{i64}, fn: func(st *callState, _ api.Module, s []uint64) ([]byte, error) {
		msg, ok, err := st.call.Poll(hostapi.SubscriptionID(s[0]))
		if err != nil || !ok {
			return nil, err
		}
		return encodeMessage(msg)
	}},
	{name: "ipc_unsubscribe", params: []api.ValueType{i64}, fn: func(st *callState, _ api.Module, s []uint64) ([]byte, error) {
		return nil, st.call.Unsubscribe(hostapi.SubscriptionID(s[0]))
	}},
	{name: "ipc_interceptors", params: p(2), fn: func(st *callState, mod api.Module, s []uint64) ([]byte, error) {
		topic, err := arg(mod, s[0], s[1], "topic")
		if err != nil {
			return nil, err
		}
		ids, err := st.call.Interceptors(string(topic))
		if err != nil {
			return nil, err
		}
		return jsonOf(ids)
	}},
	{name: "ipc_exact_interceptors", params: p(2), fn: func(st *callState, mod api.Module, s []uint64) ([]byte, error) {
		topic, err := arg(mod, s[0], s[1], "topic")
		if err != nil {
			return nil, err
		}
		ids, err := st.call.ExactInterceptors(string(topic))
		if err != nil {
			return nil, err
		}
		return jsonOf(ids)
	}},
	{name: "kv_get", params: p(2), fn: func(st *callState, mod api.Module, s []uint64) ([]byte, error) {
		key, err := arg(mod, s[0], s[1], "key")
		if err != nil {
			return nil, err
		}
		v, ok, err := st.call.KVGet(string(key))
		if err == nil && !ok {
			err = hostapi.Errorf(hostapi.CodeNotFound, "kv_get", "no key %q", key)
		}
		return v, err
	}},
	{name: "kv_set", params: p(4), fn: func(st *callState, mod api.Module, s []uint64) ([]byte, error) {
		key, val, err := twoArgs(mod, s, "key", "value")
		if err != nil {
			return nil, err
		}
		return nil, st.call.KVSet(string(key), val)
	}},
	{name: "kv_delete", params: p(2), fn: pathOp(func(c *host.Call, k string) error { return c.KVDelete(k) })},
	{name: "kv_list", params: p(2), fn: func(st *callState, mod api.Module, s []uint64) ([]byte, error) {
		prefix, err := arg(mod, s[0], s[1], "prefix")
		if err != nil {
			return nil, err
		}
		keys, err := st.call.KVList(string(prefix))
		if err != nil {
			return nil, err
		}
		if keys == nil {
			keys = []string{}
		}
		return jsonOf(keys)
	}},
	{name: "kv_clear", params: p(2), fn: func(st *callState, mod api.Module, s []uint64) ([]byte, error) {
		prefix, err := arg(mod, s[0], s[1], "prefix")
		if err != nil {
			return nil, err
		}
		n, err := st.call.KVClear(string(prefix))
		return u64(uint64(n)), err
	}},
	{name: "fs_read", params: p(2), fn: func(st *callState, mod api.Module, s []uint64) ([]byte, error) {
		path, err := arg(mod, s[0], s[1], "path")
		if err != nil {
			return nil, err
		}
		return st.call.FSRead(string(path))
	}},
	{name: "fs_write", params: p(4), fn: func(st *callState, mod api.Module, s []uint64) ([]byte, error) {
		path, data, err := twoArgs(mod, s, "path", "data")
		if err != nil {
			return nil, err
		}
		return nil, st.call.FSWrite(string(path), data)
	}},
	{name: "fs_stat", params: p(2), fn: func(st *callState, mod api.Module, s []uint64) ([]byte, error) {
		path, err := arg(mod, s[0], s[1], "path")
		if err != nil {
			return nil, err
		}
		fi, err := st.call.FSStat(string(path))
		if err != nil {
			return nil, err
		}
		return jsonOf(fi)
	}},
	{name: "fs_resolve", params: p(3), fn: func(st *callState, mod api.Module, s []uint64) ([]byte, error) {
		path, err := arg(mod, s[0], s[1], "path")
		if err != nil {
			return nil, err
		}
		real, err := st.call.FSResolve(string(path), uint32(s[2]) != 0)
		if err != nil {
			return nil, err
		}
		return []byte(real), nil
	}},
	{name: "fs_list", params: p(2), fn: func(st *callState, mod api.Module, s []uint64) ([]byte, error) {
		path, err := arg(mod, s[0], s[1], "path")
		if err != nil {
			return nil, err
		}
		es, err := st.call.FSList(string(path))
		if err != nil {
			return nil, err
		}
		if es == nil {
			es = []hostapi.DirEntry{}
		}
		return jsonOf(es)
	}},
	{name: "fs_mkdir", params: p(2), fn: pathOp(func(c *host.Call, path string) error { return c.FSMkdir(path) })},
	{name: "fs_remove", params: p(2), fn: pathOp(func(c *host.Call, path string) error { return c.FSRemove(path) })},
	{name: "fs_rename", params: p(4), fn: func(st *callState, mod api.Module, s []uint64) ([]byte, error) {
		from, to, err := twoArgs(mod, s, "from", "to")
		if err != nil {
			return nil, err
		}
		return nil, st.call.FSRename(string(from), string(to))
	}},
	{name: "http_do", params: p(2), fn: func(st *callState, mod api.Module, s []uint64) ([]byte, error) {
		raw, err := arg(mod, s[0], s[1], "request")
		if err != nil {
			return nil, err
		}
		var req hostapi.HTTPRequest
		if err := json.Unmarshal(raw, &req); err != nil {
			return nil, hostapi.Errorf(hostapi.CodeInvalid, "http", "request is not the JSON of docs/abi.md: %v", err)
		}
		resp, err := st.call.HTTPDo(req)
		if err != nil {
			return nil, err
		}
		return jsonOf(resp)
	}},
	{name: "process_run", params: p(2), fn: func(st *callState, mod api.Module, s []uint64) ([]byte, error) {
		raw, err := arg(mod, s[0], s[1], "request")
		if err != nil {
			return nil, err
		}
		var req hostapi.ProcessRequest
		if err := json.Unmarshal(raw, &req); err != nil {
			return nil, hostapi.Errorf(hostapi.CodeInvalid, "process_run", "request is not the JSON of docs/abi.md: %v", err)
		}
		res, err := st.call.ProcessRun(req)
		if err != nil {
			return nil, err
		}
		return jsonOf(res)
	}},
	{name: "log", params: p(3), outsideCall: true, fn: func(st *callState, mod api.Module, s []uint64) ([]byte, error) {
		msg, err := arg(mod, s[1], s[2], "message")
		if err != nil {
			return nil, err
		}
		level := hostapi.LogLevel(int32(s[0]))
		if st.call == nil {
			st.eng.log.Log(context.Background(), slog.Level(level), string(msg), "source", "capsule", "phase", "init")
			return nil, nil
		}
		st.call.Log(level, string(msg))
		return nil, nil
	}},
	{name: "capsule_id", params: nil, fn: func(st *callState, _ api.Module, _ []uint64) ([]byte, error) {
		return []byte(st.call.CapsuleID()), nil
	}},
	{name: "principal", params: nil, fn: func(st *callState, _ api.Module, _ []uint64) ([]byte, error) {
		return []byte(st.call.Principal()), nil
	}},
	{name: "config", params: p(2), fn: func(st *callState, mod api.Module, s []uint64) ([]byte, error) {
		key, err := arg(mod, s[0], s[1], "key")
		if err != nil {
			return nil, err
		}
		v, ok := st.call.Config(string(key))
		if !ok {
			return nil, hostapi.Errorf(hostapi.CodeNotFound, "config", "no value for %q", key)
		}
		return []byte(v), nil
	}},
	{name: "holds_grant", params: p(4), fn: func(st *callState, mod api.Module, s []uint64) ([]byte, error) {
		id, grant, err := twoArgs(mod, s, "capsule id", "grant")
		if err != nil {
			return nil, err
		}
		held, err := st.call.HoldsGrant(string(id), string(grant))
		if err != nil || !held {
			return u64(0), err
		}
		return u64(1), nil
	}},
	{name: "set_failure_reply", params: p(4), fn: func(st *callState, mod api.Module, s []uint64) ([]byte, error) {
		topic, payload, err := twoArgs(mod, s, "topic", "payload")
		if err != nil {
			return nil, err
		}
		return nil, st.call.SetFailureReply(string(topic), payload)
	}},
	{name: "audit_record", params: p(2), fn: func(st *callState, mod api.Module, s []uint64) ([]byte, error) {
		raw, err := arg(mod, s[0], s[1], "record")
		if err != nil {
			return nil, err
		}
		var rec hostapi.AuditRecord
		if err := json.Unmarshal(raw, &rec); err != nil {
			return nil, hostapi.Errorf(hostapi.CodeInvalid, "audit_record", "record is not the JSON of docs/abi.md: %v", err)
		}
		return nil, st.call.AuditRecord(rec)
	}},
	{name: "set_cancel_key", params: p(2), fn: pathOp(func(c *host.Call, key string) error { return c.SetCancelKey(key) })},
	{name: "agent_policy", params: nil, fn: func(st *callState, _ api.Module, _ []uint64) ([]byte, error) {
		pol, err := st.call.AgentPolicy()
		if err != nil {
			return nil, err
		}
		return json.Marshal(pol)
	}},
	{name: "capability_mint", params: p(2), fn: func(st *callState, mod api.Module, s []uint64) ([]byte, error) {
		raw, err := arg(mod, s[0], s[1], "grant")
		if err != nil {
			return nil, err
		}
		var g hostapi.CapabilityGrant
		if err := json.Unmarshal(raw, &g); err != nil {
			return nil, hostapi.Errorf(hostapi.CodeInvalid, "mint_capability", "grant: %v", err)
		}
		id, err := st.call.MintCapability(g)
		return []byte(id), err
	}},
	{name: "capability_check", params: p(2), fn: func(st *callState, mod api.Module, s []uint64) ([]byte, error) {
		raw, err := arg(mod, s[0], s[1], "query")
		if err != nil {
			return nil, err
		}
		var q struct{ Capsule, Tool, Resource string }
		if err := json.Unmarshal(raw, &q); err != nil {
			return nil, hostapi.Errorf(hostapi.CodeInvalid, "check_capability", "query: %v", err)
		}
		id, err := st.call.CheckCapability(q.Capsule, q.Tool, q.Resource)
		return []byte(id), err
	}},
	{name: "approval_request", params: p(4), fn: func(st *callState, mod api.Module, s []uint64) ([]byte, error) {
		action, resource, err := twoArgs(mod, s, "action", "resource")
		if err != nil {
			return nil, err
		}
		approved, err := st.call.RequestApproval(string(action), string(resource))
		if err != nil {
			return nil, err
		}
		if approved {
			return u64(1), nil
		}
		return u64(0), nil
	}},
}

// pathOp adapts an import that takes one string and answers nothing.
func pathOp(f func(c *host.Call, s string) error) importFn {
	return func(st *callState, mod api.Module, s []uint64) ([]byte, error) {
		a, err := arg(mod, s[0], s[1], "argument")
		if err != nil {
			return nil, err
		}
		return nil, f(st.call, string(a))
	}
}

func (r *Runtime) instantiateHostModule(ctx context.Context) error {
	b := r.rt.NewHostModuleBuilder(hostModule)
	for _, d := range importDefs {
		b.NewFunctionBuilder().WithGoModuleFunction(r.wrap(d), d.params, []api.ValueType{i64}).Export(d.name)
	}
	b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(_ context.Context, _ api.Module, s []uint64) {
		s[0] = uint64(time.Now().UnixNano())
	}), nil, []api.ValueType{i64}).Export("now")
	_, err := b.Instantiate(ctx)
	return err
}

// wrap turns an import body into a wazero host function: it finds the call
// the import acts for, times it, and writes its answer into guest memory.
func (r *Runtime) wrap(d importDef) api.GoModuleFunc {
	return func(ctx context.Context, mod api.Module, stack []uint64) {
		st := r.stateOf(mod)
		if st == nil {
			stack[0] = abi.PackResult(0, 0, true)
			return
		}
		start := clock.Process.UnixNano()
		if st.hostCall() == nil && !d.outsideCall {
			// Outside a call nothing can be written back (the scratch
			// buffer may not exist yet): the bare error flag means closed.
			stack[0] = abi.PackResult(0, 0, true)
			return
		}
		out, err := d.fn(st, mod, stack)
		stack[0] = st.answer(ctx, mod, d.name, out, err)
		st.host += time.Duration(clock.Process.UnixNano() - start)
	}
}

// stateOf finds the state of the instance calling an import.
// (The call's own context, which wazero hands imports, is not used for
// this: carrying the state in it would cost every call an allocation.)
func (r *Runtime) stateOf(mod api.Module) *callState {
	v, _ := r.states.Load(mod)
	st, _ := v.(*callState)
	return st
}

// answer writes an import's result into the guest and packs its location.
// Results that fit go into the scratch buffer; larger ones into memory
// from astrid_alloc. A guest that breaks that contract traps (panicking
// here makes wazero fail the guest's call, never the kernel).
func (st *callState) answer(ctx context.Context, mod api.Module, name string, out []byte, err error) uint64 {
	isErr := err != nil
	if isErr {
		st.buf = appendHostError(st.buf[:0], err)
		out = st.buf
	}
	if len(out) == 0 {
		return abi.PackResult(0, 0, isErr)
	}
	if len(out) > 1<<31-1 {
		st.buf = appendHostError(st.buf[:0], hostapi.Errorf(hostapi.CodeTooLarge, name, "result of %d bytes exceeds the ABI's 2 GiB", len(out)))
		out, isErr = st.buf, true
	}
	n := uint32(len(out))
	ptr := st.inst.scratch.ptr
	if n > st.inst.scratch.cap {
		res, cerr := st.inst.alloc.Call(ctx, uint64(n))
		if cerr != nil {
			panic(fmt.Errorf("%s: %s(%d) failed: %w", name, exportAlloc, n, cerr))
		}
		ptr = uint32(res[0])
	}
	if !mod.Memory().Write(ptr, out) {
		panic(fmt.Errorf("%s: result buffer %#x (+%d) is outside the guest's memory", name, ptr, n))
	}
	return abi.PackResult(ptr, n, isErr)
}

// arg copies one (ptr, len) argument out of guest memory.
func arg(mod api.Module, ptr, n uint64, what string) ([]byte, error) {
	if n == 0 {
		return nil, nil
	}
	b, ok := mod.Memory().Read(uint32(ptr), uint32(n))
	if !ok {
		return nil, hostapi.Errorf(hostapi.CodeInvalid, "abi", "%s: %d bytes at %#x are outside the guest's memory (%d bytes)", what, uint32(n), uint32(ptr), mod.Memory().Size())
	}
	return append([]byte(nil), b...), nil
}

func twoArgs(mod api.Module, s []uint64, a, b string) ([]byte, []byte, error) {
	x, err := arg(mod, s[0], s[1], a)
	if err != nil {
		return nil, nil, err
	}
	y, err := arg(mod, s[2], s[3], b)
	return x, y, err
}

func u64(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }

func jsonOf(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, hostapi.Errorf(hostapi.CodeInternal, "abi", "encode result: %v", err)
	}
	return b, nil
}

// wireMessage is hostapi.Message with the payload as a JSON value.
type wireMessage struct {
	Topic     string          `json:"topic"`
	Payload   json.RawMessage `json:"payload"`
	SourceID  string          `json:"source_id"`
	Principal string          `json:"principal,omitempty"`
	Host      string          `json:"host,omitempty"`
	Lost      uint64          `json:"lost,omitempty"`
}

func encodeMessage(m hostapi.Message) ([]byte, error) {
	payload := json.RawMessage(m.Payload)
	if !json.Valid(payload) {
		// Never expected (payloads are JSON on the bus), but a guest must
		// always get valid JSON: hand it over as a string.
		b, _ := json.Marshal(string(m.Payload))
		payload = b
	}
	return jsonOf(wireMessage{Topic: m.Topic, Payload: payload, SourceID: m.SourceID, Principal: m.Principal, Host: m.Host, Lost: m.Lost})
}
