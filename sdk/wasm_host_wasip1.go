//go:build wasip1

package sdk

import (
	"encoding/binary"
	"encoding/json"
	"runtime"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/abi"
	"github.com/astrid-go/astrid/internal/jsonscan"
)

// The `astrid` host module (docs/abi.md §5). Every import but now returns a
// packed result.

//go:wasmimport astrid ipc_publish
func abiIPCPublish(topicPtr, topicLen, payloadPtr, payloadLen uint32) uint64

//go:wasmimport astrid ipc_subscribe
func abiIPCSubscribe(patternPtr, patternLen uint32) uint64

//go:wasmimport astrid ipc_recv
func abiIPCRecv(sub uint64, timeoutMs int64) uint64

//go:wasmimport astrid ipc_poll
func abiIPCPoll(sub uint64) uint64

//go:wasmimport astrid ipc_unsubscribe
func abiIPCUnsubscribe(sub uint64) uint64

//go:wasmimport astrid ipc_interceptors
func abiIPCInterceptors(topicPtr, topicLen uint32) uint64

//go:wasmimport astrid ipc_exact_interceptors
func abiIPCExactInterceptors(topicPtr, topicLen uint32) uint64

//go:wasmimport astrid kv_get
func abiKVGet(keyPtr, keyLen uint32) uint64

//go:wasmimport astrid kv_set
func abiKVSet(keyPtr, keyLen, valPtr, valLen uint32) uint64

//go:wasmimport astrid kv_delete
func abiKVDelete(keyPtr, keyLen uint32) uint64

//go:wasmimport astrid kv_list
func abiKVList(prefixPtr, prefixLen uint32) uint64

//go:wasmimport astrid kv_clear
func abiKVClear(prefixPtr, prefixLen uint32) uint64

//go:wasmimport astrid fs_read
func abiFSRead(pathPtr, pathLen uint32) uint64

//go:wasmimport astrid fs_write
func abiFSWrite(pathPtr, pathLen, dataPtr, dataLen uint32) uint64

//go:wasmimport astrid fs_stat
func abiFSStat(pathPtr, pathLen uint32) uint64

//go:wasmimport astrid fs_resolve
func abiFSResolve(pathPtr, pathLen, write uint32) uint64

//go:wasmimport astrid fs_list
func abiFSList(pathPtr, pathLen uint32) uint64

//go:wasmimport astrid fs_mkdir
func abiFSMkdir(pathPtr, pathLen uint32) uint64

//go:wasmimport astrid fs_remove
func abiFSRemove(pathPtr, pathLen uint32) uint64

//go:wasmimport astrid fs_rename
func abiFSRename(fromPtr, fromLen, toPtr, toLen uint32) uint64

//go:wasmimport astrid http_do
func abiHTTPDo(reqPtr, reqLen uint32) uint64

//go:wasmimport astrid process_run
func abiProcessRun(reqPtr, reqLen uint32) uint64

//go:wasmimport astrid log
func abiLog(level int32, msgPtr, msgLen uint32) uint64

//go:wasmimport astrid now
func abiNow() int64

//go:wasmimport astrid capsule_id
func abiCapsuleID() uint64

//go:wasmimport astrid config
func abiConfig(keyPtr, keyLen uint32) uint64

//go:wasmimport astrid holds_grant
func abiHoldsGrant(idPtr, idLen, grantPtr, grantLen uint32) uint64

//go:wasmimport astrid approval_request
func abiApprovalRequest(actionPtr, actionLen, resourcePtr, resourceLen uint32) uint64

//go:wasmimport astrid ipc_request
func abiIPCRequest(topicPtr, topicLen, payloadPtr, payloadLen, reqPtr, reqLen uint32) uint64

//go:wasmimport astrid ipc_reply
func abiIPCReply(topicPtr, topicLen, corrPtr, corrLen, payloadPtr, payloadLen uint32) uint64

//go:wasmimport astrid ipc_serving
func abiIPCServing() uint64

//go:wasmimport astrid set_failure_reply
func abiSetFailureReply(topicPtr, topicLen, payloadPtr, payloadLen uint32) uint64

//go:wasmimport astrid set_cancel_key
func abiSetCancelKey(keyPtr, keyLen uint32) uint64

//go:wasmimport astrid audit_record
func abiAuditRecord(recPtr, recLen uint32) uint64

// wasmHost is hostapi.Host over the imports; the kernel knows which call
// and principal an import acts for.
type wasmHost struct{}

var _ hostapi.Host = (*wasmHost)(nil)

func call1(f func(p, n uint32) uint64, s string) ([]byte, error) {
	p, n := abi.StringPtr(s)
	r := f(p, n)
	runtime.KeepAlive(s)
	return result(r)
}

func call2(f func(p1, n1, p2, n2 uint32) uint64, s string, b []byte) ([]byte, error) {
	p1, n1 := abi.StringPtr(s)
	p2, n2 := abi.BytesPtr(b)
	r := f(p1, n1, p2, n2)
	runtime.KeepAlive(s)
	runtime.KeepAlive(b)
	return result(r)
}

func call3(f func(p1, n1, p2, n2, p3, n3 uint32) uint64, s string, b, c []byte) ([]byte, error) {
	p1, n1 := abi.StringPtr(s)
	p2, n2 := abi.BytesPtr(b)
	p3, n3 := abi.BytesPtr(c)
	r := f(p1, n1, p2, n2, p3, n3)
	runtime.KeepAlive(s)
	runtime.KeepAlive(b)
	runtime.KeepAlive(c)
	return result(r)
}

func decodeJSON[T any](b []byte, err error) (T, error) {
	var v T
	if err != nil {
		return v, err
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return v, hostapi.Errorf(hostapi.CodeInternal, "abi", "host answered malformed JSON: %v", err)
	}
	return v, nil
}

// decodeStrings is decodeJSON for a list of ids or keys, which the host
// writes plain: jsonscan.DecodeStrings reads that form without encoding/json's
// per-byte scanner (a guest call per byte).
func decodeStrings(b []byte, err error) ([]string, error) {
	if err == nil {
		if ss, ok := jsonscan.DecodeStrings(b); ok {
			return ss, nil
		}
	}
	return decodeJSON[[]string](b, err)
}

func u64(b []byte, err error) (uint64, error) {
	if err != nil {
		return 0, err
	}
	if len(b) != 8 {
		return 0, hostapi.Errorf(hostapi.CodeInternal, "abi", "host answered %d bytes, want a u64", len(b))
	}
	return binary.LittleEndian.Uint64(b), nil
}

// wireMessage is a received message on the wire: the payload is a JSON
// value, not base64.
type wireMessage struct {
	Topic     string          `json:"topic"`
	Payload   json.RawMessage `json:"payload"`
	SourceID  string          `json:"source_id"`
	Principal string          `json:"principal,omitempty"`
	Host      string          `json:"host,omitempty"`
	Lost      uint64          `json:"lost,omitempty"`
}

func (w wireMessage) message() hostapi.Message {
	return hostapi.Message{Topic: w.Topic, Payload: []byte(w.Payload), SourceID: w.SourceID, Principal: w.Principal, Host: w.Host, Lost: w.Lost}
}

func (*wasmHost) Publish(topic string, payload []byte) error {
	_, err := call2(abiIPCPublish, topic, payload)
	return err
}

func (*wasmHost) PublishRequest(topic string, payload []byte, req hostapi.Request) error {
	raw, err := json.Marshal(req)
	if err != nil {
		return err
	}
	_, err = call3(abiIPCRequest, topic, payload, raw)
	return err
}

func (*wasmHost) PublishReply(topic, correlationID string, payload []byte) error {
	_, err := call3(abiIPCReply, topic, []byte(correlationID), payload)
	return err
}

func (*wasmHost) Serving() (replyTo, correlationID string) {
	b, err := result(abiIPCServing())
	if err != nil || len(b) == 0 {
		return "", ""
	}
	var r hostapi.Request
	if json.Unmarshal(b, &r) != nil {
		return "", ""
	}
	return r.ReplyTo, r.CorrelationID
}

func (*wasmHost) Subscribe(pattern string) (hostapi.SubscriptionID, error) {
	id, err := u64(call1(abiIPCSubscribe, pattern))
	return hostapi.SubscriptionID(id), err
}

func (*wasmHost) Recv(sub hostapi.SubscriptionID, timeout time.Duration) (hostapi.Message, error) {
	w, err := decodeJSON[wireMessage](result(abiIPCRecv(uint64(sub), timeout.Milliseconds())))
	return w.message(), err
}

func (*wasmHost) Poll(sub hostapi.SubscriptionID) (hostapi.Message, bool, error) {
	b, err := result(abiIPCPoll(uint64(sub)))
	if err != nil || len(b) == 0 {
		return hostapi.Message{}, false, err
	}
	w, err := decodeJSON[wireMessage](b, nil)
	return w.message(), err == nil, err
}

func (*wasmHost) Unsubscribe(sub hostapi.SubscriptionID) error {
	_, err := result(abiIPCUnsubscribe(uint64(sub)))
	return err
}

func (*wasmHost) Interceptors(topic string) ([]string, error) {
	return decodeStrings(call1(abiIPCInterceptors, topic))
}

func (*wasmHost) ExactInterceptors(topic string) ([]string, error) {
	return decodeStrings(call1(abiIPCExactInterceptors, topic))
}

func (*wasmHost) KVGet(key string) ([]byte, bool, error) {
	b, err := call1(abiKVGet, key)
	if hostapi.CodeOf(err) == hostapi.CodeNotFound {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if b == nil {
		b = []byte{}
	}
	return b, true, nil
}

func (*wasmHost) KVSet(key string, value []byte) error {
	_, err := call2(abiKVSet, key, value)
	return err
}

func (*wasmHost) KVDelete(key string) error {
	_, err := call1(abiKVDelete, key)
	return err
}

func (*wasmHost) KVList(prefix string) ([]string, error) {
	return decodeStrings(call1(abiKVList, prefix))
}

func (*wasmHost) KVClear(prefix string) (int, error) {
	n, err := u64(call1(abiKVClear, prefix))
	return int(n), err
}

func (*wasmHost) FSRead(path string) ([]byte, error) {
	b, err := call1(abiFSRead, path)
	if err == nil && b == nil {
		b = []byte{}
	}
	return b, err
}

func (*wasmHost) FSWrite(path string, data []byte) error {
	_, err := call2(abiFSWrite, path, data)
	return err
}

func (*wasmHost) FSStat(path string) (hostapi.FileInfo, error) {
	return decodeJSON[hostapi.FileInfo](call1(abiFSStat, path))
}

func (*wasmHost) FSList(path string) ([]hostapi.DirEntry, error) {
	return decodeJSON[[]hostapi.DirEntry](call1(abiFSList, path))
}

func (*wasmHost) FSMkdir(path string) error {
	_, err := call1(abiFSMkdir, path)
	return err
}

func (*wasmHost) FSRemove(path string) error {
	_, err := call1(abiFSRemove, path)
	return err
}

func (*wasmHost) FSRename(from, to string) error {
	_, err := call2(abiFSRename, from, []byte(to))
	return err
}

func (*wasmHost) FSResolve(path string, write bool) (string, error) {
	w := uint32(0)
	if write {
		w = 1
	}
	p, n := abi.StringPtr(path)
	r := abiFSResolve(p, n, w)
	runtime.KeepAlive(path)
	b, err := result(r)
	return string(b), err
}

func (*wasmHost) HTTPDo(req hostapi.HTTPRequest) (hostapi.HTTPResponse, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return hostapi.HTTPResponse{}, hostapi.Errorf(hostapi.CodeInvalid, "http", "%v", err)
	}
	p, n := abi.BytesPtr(b)
	r := abiHTTPDo(p, n)
	runtime.KeepAlive(b)
	return decodeJSON[hostapi.HTTPResponse](result(r))
}

// AuditRecord records a tool call event in the host's audit chain
// (hostapi.Audit).
func (*wasmHost) AuditRecord(rec hostapi.AuditRecord) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return hostapi.Errorf(hostapi.CodeInvalid, "audit_record", "%v", err)
	}
	p, n := abi.BytesPtr(b)
	r := abiAuditRecord(p, n)
	runtime.KeepAlive(b)
	_, err = result(r)
	return err
}

// ProcessRun runs a program through the host (hostapi.Process). On an
// error (cancelled, timed out) the guest hears the code, not the partial
// output.
func (*wasmHost) ProcessRun(req hostapi.ProcessRequest) (hostapi.ProcessResult, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return hostapi.ProcessResult{}, hostapi.Errorf(hostapi.CodeInvalid, "process_run", "%v", err)
	}
	p, n := abi.BytesPtr(b)
	r := abiProcessRun(p, n)
	runtime.KeepAlive(b)
	return decodeJSON[hostapi.ProcessResult](result(r))
}

func (*wasmHost) CapsuleID() string {
	b, _ := result(abiCapsuleID())
	return string(b)
}

// Principal is the invoking principal of the call in progress, read from
// its invocation record.
func (*wasmHost) Principal() string { return string(record.Field(abi.FieldPrincipal)) }

func (*wasmHost) Config(key string) (string, bool) {
	b, err := call1(abiConfig, key)
	if err != nil {
		return "", false
	}
	return string(b), true
}

func (*wasmHost) Log(level hostapi.LogLevel, msg string) {
	p, n := abi.StringPtr(msg)
	r := abiLog(int32(level), p, n)
	runtime.KeepAlive(msg)
	_, _ = result(r)
}

func (*wasmHost) Now() time.Time { return time.Unix(0, abiNow()) }

func (*wasmHost) HoldsGrant(capsuleID, grant string) (bool, error) {
	n, err := u64(call2(abiHoldsGrant, capsuleID, []byte(grant)))
	return n == 1, err
}

func (*wasmHost) SetFailureReply(topic string, payload []byte) error {
	_, err := call2(abiSetFailureReply, topic, payload)
	return err
}

func (*wasmHost) SetCancelKey(key string) error {
	_, err := call1(abiSetCancelKey, key)
	return err
}

func (*wasmHost) RequestApproval(action, resource string) (bool, error) {
	n, err := u64(call2(abiApprovalRequest, action, []byte(resource)))
	return n == 1, err
}
