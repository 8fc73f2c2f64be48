package wasm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/abi"
	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/internal/capsule"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/ledger"
	"github.com/astrid-go/astrid/ipc"
)

func (f *fixture) invoke(t *testing.T, ctx context.Context, handler, payload string) (hostapi.Verdict, error) {
	t.Helper()
	if payload == "" {
		payload = "{}"
	}
	return f.eng.Invoke(ctx, hostapi.Invocation{
		Handler: handler, Pattern: "hostile.v1." + handler, Topic: "hostile.v1." + handler,
		SourceID: "test", Principal: ipc.DefaultPrincipal, Payload: []byte(payload),
	})
}

func (f *fixture) mustWork(t *testing.T) {
	t.Helper()
	v, err := f.invoke(t, context.Background(), "echo", `{"still":"alive"}`)
	if err != nil || v.Action != hostapi.Final || string(v.Payload) != `{"still":"alive"}` {
		t.Fatalf("echo after the attack: %+v, %v", v, err)
	}
}

func TestWellBehavedCalls(t *testing.T) {
	f := loadHostile(t, Options{})
	ctx := context.Background()

	v, err := f.invoke(t, ctx, "noop", "")
	if err != nil || v.Action != hostapi.Continue || len(v.Payload) != 0 {
		t.Fatalf("noop: %+v, %v", v, err)
	}
	f.mustWork(t)

	v, err = f.invoke(t, ctx, "kv", `{"n":1}`)
	if err != nil {
		t.Fatalf("kv: %v", err)
	}
	var kv struct {
		Value     map[string]int `json:"value"`
		Keys      []string       `json:"keys"`
		Principal string         `json:"principal"`
		Capsule   string         `json:"capsule"`
	}
	if err := json.Unmarshal(v.Payload, &kv); err != nil {
		t.Fatalf("kv answer %s: %v", v.Payload, err)
	}
	if kv.Value["n"] != 1 || len(kv.Keys) != 1 || kv.Keys[0] != "k" || kv.Principal != ipc.DefaultPrincipal || kv.Capsule != "hostile" {
		t.Errorf("kv answer = %+v", kv)
	}

	// A handler bound in the manifest but absent from the code, and one
	// the manifest does not bind: both not supported.
	if _, err := f.invoke(t, ctx, "not_in_code", ""); !errors.Is(err, capsule.ErrNotSupported) {
		t.Errorf("unbound handler: %v, want ErrNotSupported", err)
	}
	if _, err := f.invoke(t, ctx, "nope", ""); !errors.Is(err, capsule.ErrNotSupported) {
		t.Errorf("unknown handler: %v, want ErrNotSupported", err)
	}
}

func TestGuestOutputReachesTheKernelLog(t *testing.T) {
	f := loadHostile(t, Options{})
	if _, err := f.invoke(t, context.Background(), "print", ""); err != nil {
		t.Fatal(err)
	}
	logs := f.logs.String()
	for _, want := range []string{
		`msg="guest output" capsule=hostile engine=wasm stream=stdout line="hello from the guest"`,
		`stream=stderr line="complaint from the guest"`,
		`msg="logged through the host"`,
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("log lacks %q:\n%s", want, logs)
		}
	}
}

func TestHostileCapsuleIsContained(t *testing.T) {
	f := loadHostile(t, Options{MemoryLimitMiB: 64})
	tests := []struct {
		name     string
		handler  string
		timeout  time.Duration
		wantCode hostapi.Code // for handler errors
		wantErr  string       // for traps
	}{
		{name: "infinite loop is timed out", handler: "loop", timeout: 300 * time.Millisecond, wantErr: "deadline exceeded"},
		{name: "memory growth traps", handler: "grow", timeout: time.Minute, wantErr: "instance discarded"},
		{name: "sleep past the deadline", handler: "sleep", timeout: 300 * time.Millisecond, wantErr: "deadline exceeded"},
		{name: "panic traps", handler: "panic", timeout: time.Minute, wantErr: "instance discarded"},
		{name: "publish outside the ACL is denied", handler: "publish_outside", timeout: time.Minute, wantCode: hostapi.CodeDenied},
		{name: "reading /etc/passwd is denied", handler: "read_passwd", timeout: time.Minute, wantCode: hostapi.CodeDenied},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), tt.timeout)
			defer cancel()
			before := f.eng.Stats().Retired
			v, err := f.invoke(t, ctx, tt.handler, "")
			if err == nil {
				t.Fatalf("%s succeeded: %+v", tt.handler, v)
			}
			if tt.wantErr != "" {
				if !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("error %q lacks %q", err, tt.wantErr)
				}
				if f.eng.Stats().Retired != before+1 {
					t.Errorf("the trapped instance was not discarded (retired %d → %d)", before, f.eng.Stats().Retired)
				}
			} else {
				if got := hostapi.CodeOf(err); got != tt.wantCode {
					t.Errorf("code = %s (%v), want %s", got, err, tt.wantCode)
				}
				if v.Action != hostapi.Deny {
					t.Errorf("a failed handler answers %s, want deny", v.Action)
				}
			}
			f.mustWork(t)
		})
	}
	if s := f.d.Stats(); s.PublishDenied == 0 {
		t.Errorf("the denied publish was not counted: %+v", s)
	}
}

func TestPanicPublishesTheFailureReply(t *testing.T) {
	f := loadHostile(t, Options{})
	sub, err := f.bus.Subscribe(bus.RouteSpec{Owner: "test", Pattern: "hostile.v1.failed"})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if _, err := f.invoke(t, context.Background(), "panic", ""); err == nil {
		t.Fatal("panic did not fail the call")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d, err := sub.Recv(ctx)
	if err != nil {
		t.Fatalf("no failure reply: %v", err)
	}
	if d.Envelope.SourceID != "hostile" || !strings.Contains(string(ipc.GuestBytes(d.Envelope.Payload)), `"failed":true`) {
		t.Errorf("failure reply = %+v", d.Envelope)
	}
}

func TestOutOfBoundsPointersAreRefused(t *testing.T) {
	f := loadHostile(t, Options{})
	v, err := f.invoke(t, context.Background(), "badptr", "")
	if err != nil {
		t.Fatalf("badptr: %v", err)
	}
	var got map[string]bool
	if err := json.Unmarshal(v.Payload, &got); err != nil {
		t.Fatalf("answer %s: %v", v.Payload, err)
	}
	for _, name := range []string{"publish_topic_past_end", "publish_huge_len", "fs_read_wrapped", "log_past_end"} {
		if isErr, ok := got[name]; !ok || !isErr {
			t.Errorf("%s: host answered error=%v (present %v), want an error", name, isErr, ok)
		}
	}
	f.mustWork(t)
}

func TestPublishFloodIsRateLimited(t *testing.T) {
	f := loadHostile(t, Options{})
	v, err := f.invoke(t, context.Background(), "flood", "")
	if err != nil {
		t.Fatalf("flood: %v", err)
	}
	var got struct {
		Published int          `json:"published"`
		Code      hostapi.Code `json:"code"`
	}
	if err := json.Unmarshal(v.Payload, &got); err != nil {
		t.Fatal(err)
	}
	if got.Code != hostapi.CodeRateLimited || got.Published >= 10000 {
		t.Errorf("flood published %d and stopped with %s, want rate limited", got.Published, got.Code)
	}
	if s := f.d.Stats(); s.RateLimited == 0 {
		t.Errorf("rate limiting not counted: %+v", s)
	}
}

func TestInstancesDrawDifferentRandomBytes(t *testing.T) {
	f := loadHostile(t, Options{})
	ctx := context.Background()
	a, err := f.eng.newInstance(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	b, err := f.eng.newInstance(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer b.close()
	draw := func(inst *instance) string {
		inst.state.begin(ctx, ipc.DefaultPrincipal)
		v, err := inst.call(ctx, f.eng.index["random"], hostapi.Invocation{Handler: "random", Principal: ipc.DefaultPrincipal, Payload: []byte("{}")})
		if call, _, _ := inst.state.end(); call != nil {
			call.End()
		}
		if err != nil {
			t.Fatal(err)
		}
		return string(v.Payload)
	}
	ra, rb := draw(a), draw(b)
	if len(ra) != 34 || ra == rb {
		t.Errorf("two fresh instances drew %s and %s", ra, rb)
	}
}

func TestCancelKeyInterruptsTheGuest(t *testing.T) {
	f := loadHostile(t, Options{})
	sub, err := f.bus.Subscribe(bus.RouteSpec{Owner: "test", Pattern: "hostile.v1.failed"})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	done := make(chan error, 1)
	go func() {
		_, err := f.invoke(t, context.Background(), "cancellable", `"call-123"`)
		done <- err
	}()
	// The kernel's listener on tool.v1.request.cancel calls Cancels.Cancel
	// with the named call ids (internal/kernel's wasm end-to-end test sends
	// the real request); repeat until the guest has registered its key.
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	var callErr error
wait:
	for {
		select {
		case callErr = <-done:
			break wait
		case <-tick.C:
			f.cancels.Cancel(errors.New("cancelled by tool.v1.request.cancel"), "call-123")
		}
	}
	if callErr == nil || !strings.Contains(callErr.Error(), "cancelled") {
		t.Fatalf("cancelled call answered %v", callErr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if d, err := sub.Recv(ctx); err != nil || !strings.Contains(string(ipc.GuestBytes(d.Envelope.Payload)), "cancelled") {
		t.Fatalf("failure reply after cancel: %+v %v", d.Envelope, err)
	}
	f.mustWork(t)
}

func TestCPUTimeIsCharged(t *testing.T) {
	l := ledger.New(0)
	f := loadHostile(t, Options{Ledger: l})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, _ = f.invoke(t, ctx, "loop", "")
	u := l.Usage(ipc.DefaultPrincipal)
	if u.Calls != 1 || u.CPU < 100*time.Millisecond {
		t.Errorf("a 200 ms spin charged %+v", u)
	}
}

// TestASleepingGuestIsNotChargedForItsSleep: a guest's sleep (WASI's
// clock wait, poll_oneoff → nanosleep) spends no CPU, so it is not guest
// time: a guest that sleeps 1.5 s answers, and is charged far less than
// the sleep. (Before, the sleep was charged whole, and the principal's
// next call, the router delivering this one's answer, was refused.)
func TestASleepingGuestIsNotChargedForItsSleep(t *testing.T) {
	l := ledger.New(time.Second)
	f := loadHostile(t, Options{Ledger: l})
	const nap = 1500 * time.Millisecond
	v, err := f.invoke(t, context.Background(), "nap", fmt.Sprint(nap.Milliseconds()))
	if err != nil || v.Action != hostapi.Final || string(v.Payload) != fmt.Sprint(nap.Milliseconds()) {
		t.Fatalf("nap answered %+v, %v", v, err)
	}
	if u := l.Usage(ipc.DefaultPrincipal); u.Calls != 1 || u.CPU >= nap/2 {
		t.Errorf("a %s sleep was charged %+v: the sleep counted as guest time", nap, u)
	}
	if err := l.Admit(ipc.DefaultPrincipal); err != nil {
		t.Errorf("after a sleep, the principal is refused: %v", err)
	}
}

// TestAnOverBudgetPrincipalsCallStillRuns: the budget refuses starting
// work (the dispatcher's admission), never a call: the call may be the
// one that delivers an answer.
func TestAnOverBudgetPrincipalsCallStillRuns(t *testing.T) {
	l := ledger.New(time.Millisecond)
	f := loadHostile(t, Options{Ledger: l})
	l.Charge(ipc.DefaultPrincipal, time.Second)
	v, err := f.invoke(t, context.Background(), "echo", `{"answer":1}`)
	if err != nil || v.Action != hostapi.Final || string(v.Payload) != `{"answer":1}` {
		t.Fatalf("over-budget call answered %+v, %v", v, err)
	}
	if u := l.Usage(ipc.DefaultPrincipal); u.Calls != 2 || u.Refused != 0 {
		t.Errorf("usage %+v: want the call charged and nothing refused", u)
	}
}

// TestMalformedRecordsAreAnsweredWithErrors hands the guest records the
// kernel never writes: the guest's branch-free check must reject each with
// an error record, not trap or run a handler, and the instance must go on
// working. A record larger than the first record buffer grows it.
func TestMalformedRecordsAreAnsweredWithErrors(t *testing.T) {
	f := loadHostile(t, Options{})
	ctx := context.Background()
	inst, err := f.eng.newInstance(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer inst.close()
	echo := f.eng.index["echo"]
	good := abi.EncodeInvocation(nil, echo, abi.Invocation{Topic: "hostile.v1.echo", Principal: ipc.DefaultPrincipal, Payload: []byte(`"hi"`)})
	badHandler := append(append([]byte(nil), good[:4]...), append([]byte{0xff, 0xff, 0, 0}, good[8:]...)...)
	for name, tc := range map[string]struct {
		rec  []byte
		n    uint64
		code hostapi.Code
	}{
		"wrong version":   {append([]byte{abi.Version + 1, 0, 0, 0}, good[4:]...), uint64(len(good)), hostapi.CodeInvalid},
		"truncated":       {good, uint64(len(good) - 1), hostapi.CodeInvalid},
		"short":           {good, 3, hostapi.CodeInvalid},
		"past the buffer": {good, uint64(inst.records.cap) + 1, hostapi.CodeInvalid},
		"negative length": {good, uint64(0xffffffff), hostapi.CodeInvalid},
		"no such handler": {badHandler, uint64(len(good)), hostapi.CodeNotSupported},
	} {
		if !inst.mod.Memory().Write(inst.records.ptr, tc.rec) {
			t.Fatal("record buffer outside memory")
		}
		inst.stack[0] = tc.n
		if err := inst.invoke.CallWithStack(ctx, inst.stack[:]); err != nil {
			t.Fatalf("%s: the guest trapped: %v", name, err)
		}
		ptr, n, isErr := abi.UnpackResult(inst.stack[0])
		rec, ok := inst.mod.Memory().Read(ptr, n)
		if !isErr || !ok {
			t.Fatalf("%s: answered %#x (error flag %v), want an error record", name, inst.stack[0], isErr)
		}
		if e := decodeGuestError(rec); e.Code != tc.code {
			t.Errorf("%s: answered %v (code %d), want code %d", name, e, e.Code, tc.code)
		}
	}
	v, err := inst.call(ctx, echo, hostapi.Invocation{Topic: "hostile.v1.echo", Principal: ipc.DefaultPrincipal, Payload: []byte(`"hi"`)})
	if err != nil || string(v.Payload) != `"hi"` {
		t.Fatalf("echo after the malformed records: %+v, %v", v, err)
	}
	big := `"` + strings.Repeat("x", 3*initialRecordBuffer) + `"`
	if v, err := f.invoke(t, ctx, "echo", big); err != nil || string(v.Payload) != big {
		t.Fatalf("echo of %d bytes: %d bytes back, %v", len(big), len(v.Payload), err)
	}
}

// TestAGuestServesAndSendsRequests: a wasm guest learns the request it
// serves (ipc_serving), answers it (ipc_reply), sends one of its own
// (ipc_request), and a request whose handler traps is answered by the
// kernel on its reply address.
func TestAGuestServesAndSendsRequests(t *testing.T) {
	f := loadHostile(t, Options{})
	if err := f.d.Register(dispatch.CapsuleACL{ID: "asker", Publish: []string{"hostile.v1.*"}, Subscribe: []string{"hostile.v1.serve_answer"}}, nopTarget{}); err != nil {
		t.Fatal(err)
	}
	asker := dispatch.Caller{Capsule: "asker", Principal: ipc.DefaultPrincipal}
	answers, err := f.d.Subscribe(asker, "hostile.v1.serve_answer", false)
	if err != nil {
		t.Fatal(err)
	}
	next := func() *ipc.Envelope {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		d, err := answers.Recv(ctx)
		if err != nil {
			t.Fatalf("no answer: %v", err)
		}
		return d.Envelope
	}
	req := dispatch.Request{ReplyTo: "hostile.v1.serve_answer", CorrelationID: "r-1"}
	if _, err := f.d.Publish(asker, "hostile.v1.serve", json.RawMessage(`{"n":1}`), dispatch.RequestOf(req)); err != nil {
		t.Fatal(err)
	}
	e := next()
	var got struct {
		Payload       json.RawMessage `json:"payload"`
		ReplyTo       string          `json:"reply_to"`
		CorrelationID string          `json:"correlation_id"`
	}
	if err := json.Unmarshal(ipc.GuestBytes(e.Payload), &got); err != nil {
		t.Fatalf("answer %s: %v", e.Payload, err)
	}
	if e.SourceID != "hostile" || e.CorrelationID() != "r-1" || !e.IsReply() || got.ReplyTo != req.ReplyTo || got.CorrelationID != "r-1" || string(got.Payload) != `{"n":1}` {
		t.Fatalf("answer %+v from %s, corr %q", got, e.SourceID, e.CorrelationID())
	}
	req.CorrelationID = "r-2"
	if _, err := f.d.Publish(asker, "hostile.v1.panic", json.RawMessage(`{}`), dispatch.RequestOf(req)); err != nil {
		t.Fatal(err)
	}
	if fail, ok := ipc.AsRequestFailed(next().Payload); !ok || fail.Reason != ipc.FailHandler || fail.CorrelationID != "r-2" {
		t.Fatalf("the trapped request was answered %+v (%v)", fail, ok)
	}

	noop, err := f.bus.Subscribe(bus.RouteSpec{Owner: "hostile", Pattern: "hostile.v1.noop"}) // as the asker: a reply reaches its askers only
	if err != nil {
		t.Fatal(err)
	}
	defer noop.Close()
	if _, err := f.invoke(t, context.Background(), "ask_nobody", ""); err != nil {
		t.Fatalf("ask_nobody: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d, err := noop.Recv(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if fail, ok := ipc.AsRequestFailed(d.Envelope.Payload); !ok || fail.Reason != ipc.FailNoResponders || fail.CorrelationID != "asked-nobody" {
		t.Fatalf("the guest's request was answered %s", d.Envelope.Payload)
	}
}

type nopTarget struct{}

func (nopTarget) Intercept(context.Context, dispatch.Invocation) (dispatch.Verdict, error) {
	return dispatch.Verdict{}, nil
}
