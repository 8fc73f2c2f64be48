package host

import (
	"github.com/astrid-go/astrid/internal/clock"
)

// Every hostapi.Host method of a Call begins with
//
//	defer call.leave(call.enter(opX))
//
// where opX is the method's entry in methods. That one wrapper applies the
// Runner's rule (dispatch.Runner: hand off adopted work before you wait) to
// every method classified as waiting, and times those waits, so the CPU
// ledger does not charge them as guest time (DESIGN §4). A new method that
// is not classified, or does not go through the wrapper, fails
// TestEveryHostMethodIsClassified and TestEveryHostMethodGoesThroughTheWrapper.

// op names one hostapi.Host method.
type op uint8

// kind says whether a host method may wait on the world.
type kind uint8

const (
	_ kind = iota // the zero value: a method missing from the table
	// instant: the method returns without waiting on anything the
	// handler's own publishes could cause, nor on a disk or the network.
	instant
	// waits: the method may block (a receive, a poll loop, a disk write, a
	// file or network read): work the calling goroutine adopted is handed
	// off first, and the time is counted as a wait, not as guest time.
	waits
)

const (
	opPublish op = iota
	opSubscribe
	opRecv
	opPoll
	opUnsubscribe
	opInterceptors
	opExactInterceptors
	opKVGet
	opKVSet
	opKVDelete
	opKVList
	opKVClear
	opFSRead
	opFSWrite
	opFSStat
	opFSList
	opFSMkdir
	opFSRemove
	opFSRename
	opFSResolve
	opHTTPDo
	opCapsuleID
	opPrincipal
	opConfig
	opLog
	opNow
	opHoldsGrant
	opSetFailureReply
	opSetCancelKey
	opRequestApproval
	opProcessRun
	opNetConnect
	opNetBind
	opNetAccept
	opNetRead
	opNetWrite
	opNetClose
	opIdentityResolve
	opIdentityLink
	opIdentityUnlink
	opIdentityListLinks
	opIdentityCreateUser
	opProcessSpawn
	opProcessLogs
	opProcessKill
	opElicit
	opPublishRequest
	opPublishReply
	opServing
	opAuditRecord
	opMintCapability
	opCheckCapability
	opAgentPolicy
	numOps
)

// methods classifies every hostapi.Host method. KV writes wait: a commit
// waits for the disk (a volatile '~' key's write does not, but the class is
// the method's, and the durable kind must be counted as waiting). A poll waits in the sense that matters here: a
// handler polling in a loop is waiting for what its publish caused.
var methods = [numOps]struct {
	name string
	kind kind
}{
	opPublish:        {"Publish", instant},
	opPublishRequest: {"PublishRequest", instant},
	opPublishReply:   {"PublishReply", instant},
	opServing:        {"Serving", instant},
	// An end entry waits for the disk (group commit).
	opAuditRecord: {"AuditRecord", waits},
	// A token is kept in the store (a durable write waits for the disk);
	// a check reads it.
	opMintCapability:    {"MintCapability", waits},
	opCheckCapability:   {"CheckCapability", instant},
	opAgentPolicy:       {"AgentPolicy", instant},
	opSubscribe:         {"Subscribe", instant},
	opRecv:              {"Recv", waits},
	opPoll:              {"Poll", waits},
	opUnsubscribe:       {"Unsubscribe", instant},
	opInterceptors:      {"Interceptors", instant},
	opExactInterceptors: {"ExactInterceptors", instant},
	opKVGet:             {"KVGet", instant},
	opKVSet:             {"KVSet", waits},
	opKVDelete:          {"KVDelete", waits},
	opKVList:            {"KVList", instant},
	opKVClear:           {"KVClear", waits},
	opFSRead:            {"FSRead", waits},
	opFSWrite:           {"FSWrite", waits},
	opFSStat:            {"FSStat", waits},
	opFSList:            {"FSList", waits},
	opFSMkdir:           {"FSMkdir", waits},
	opFSRemove:          {"FSRemove", waits},
	opFSRename:          {"FSRename", waits},
	opFSResolve:         {"FSResolve", waits},
	opHTTPDo:            {"HTTPDo", waits},
	opCapsuleID:         {"CapsuleID", instant},
	opPrincipal:         {"Principal", instant},
	opConfig:            {"Config", instant},
	opLog:               {"Log", instant},
	opNow:               {"Now", instant},
	opHoldsGrant:        {"HoldsGrant", instant},
	opSetFailureReply:   {"SetFailureReply", instant},
	opSetCancelKey:      {"SetCancelKey", instant},
	opRequestApproval:   {"RequestApproval", waits},
	opProcessRun:        {"ProcessRun", waits},
	// Net: a connect, accept, read or write waits on the network; a bind
	// and a close touch the file system (a unix socket file).
	opNetConnect: {"NetConnect", waits},
	opNetBind:    {"NetBind", waits},
	opNetAccept:  {"NetAccept", waits},
	opNetRead:    {"NetRead", waits},
	opNetWrite:   {"NetWrite", waits},
	opNetClose:   {"NetClose", waits},
	// Identity reads the store; its writes wait for the disk.
	opIdentityResolve:    {"IdentityResolve", instant},
	opIdentityLink:       {"IdentityLink", waits},
	opIdentityUnlink:     {"IdentityUnlink", waits},
	opIdentityListLinks:  {"IdentityListLinks", instant},
	opIdentityCreateUser: {"IdentityCreateUser", waits},
	opProcessSpawn:       {"ProcessSpawn", waits},
	opProcessLogs:        {"ProcessLogs", instant},
	opProcessKill:        {"ProcessKill", waits},
	opElicit:             {"Elicit", waits},
}

// enter begins host method o: for a waiting method it hands the work the
// calling goroutine adopted (dispatch.Runner) to a worker, since the handler
// may be about to wait for what its own publish caused, and returns the
// start of the wait; for an instant one it returns 0.
func (call *Call) enter(o op) int64 {
	if methods[o].kind != waits {
		return 0
	}
	call.caller.Runner.HandOff()
	return clock.Process.UnixNano()
}

// leave ends the host method enter began: a wait's time is added to Waited.
func (call *Call) leave(start int64) {
	if start != 0 {
		call.waited.Add(clock.Process.UnixNano() - start)
	}
}
