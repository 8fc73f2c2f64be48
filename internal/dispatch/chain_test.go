package dispatch

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/astrid-go/astrid/internal/testutil"
)

// TestChainOrderAndVerdicts covers a chain (distinct priorities): order by
// (priority, capsule id) regardless of registration order, Continue payload
// replacement, and what ends a chain.
func TestChainOrderAndVerdicts(t *testing.T) {
	type member struct {
		id       string
		priority uint32
		answer   func(Invocation) (Verdict, error)
	}
	cont := func(Invocation) (Verdict, error) { return Verdict{}, nil }
	replace := func(p string) func(Invocation) (Verdict, error) {
		return func(Invocation) (Verdict, error) { return Verdict{Action: Continue, Payload: []byte(p)}, nil }
	}
	tests := []struct {
		name    string
		members []member // registered in this order
		// want lists "capsule:payload seen" in call order.
		want       []string
		wantStats  func(Stats) bool
		wantDenied map[string]uint64
	}{
		{
			name: "priority order, not registration order",
			members: []member{
				{"handler", 100, cont}, {"guard", 10, cont}, {"transform", 50, cont},
			},
			want: []string{"guard:{}", "transform:{}", "handler:{}"},
		},
		{
			name: "equal priorities inside a chain tie-break by capsule id",
			members: []member{
				{"z-tie", 20, cont}, {"guard", 10, cont}, {"a-tie", 20, cont},
			},
			want: []string{"guard:{}", "a-tie:{}", "z-tie:{}"},
		},
		{
			name: "continue replaces the payload for the next link; empty keeps it",
			members: []member{
				{"a", 1, replace(`{"n":1}`)}, {"b", 2, cont}, {"c", 3, replace(`{"n":3}`)}, {"d", 4, cont},
			},
			want: []string{"a:{}", `b:{"n":1}`, `c:{"n":1}`, `d:{"n":3}`},
		},
		{
			name: "final ends the chain",
			members: []member{
				{"a", 10, cont}, {"b", 30, func(Invocation) (Verdict, error) { return Verdict{Action: Final, Payload: []byte(`1`)}, nil }}, {"c", 100, cont},
			},
			want:      []string{"a:{}", "b:{}"},
			wantStats: func(s Stats) bool { return s.Finals == 1 && s.Denials == 0 },
		},
		{
			name: "deny ends the chain and is counted with its reason",
			members: []member{
				{"guard", 10, func(Invocation) (Verdict, error) { return Verdict{Action: Deny, Reason: "not approved"}, nil }}, {"handler", 100, cont},
			},
			want:       []string{"guard:{}"},
			wantDenied: map[string]uint64{"not approved": 1},
		},
		{
			name: "an error is a deny (fail closed)",
			members: []member{
				{"guard", 10, func(Invocation) (Verdict, error) { return Verdict{}, context.DeadlineExceeded }}, {"handler", 100, cont},
			},
			want:       []string{"guard:{}"},
			wantDenied: map[string]uint64{errorDenyReason: 1},
			wantStats:  func(s Stats) bool { return s.Errors == 1 },
		},
		{
			name: "a panic is a deny",
			members: []member{
				{"guard", 10, func(Invocation) (Verdict, error) { panic("trap") }}, {"handler", 100, cont},
			},
			want:       []string{"guard:{}"},
			wantDenied: map[string]uint64{errorDenyReason: 1},
		},
		{
			name: "continue with invalid JSON is a deny",
			members: []member{
				{"a", 10, replace(`{not json`)}, {"b", 100, cont},
			},
			want:       []string{"a:{}"},
			wantDenied: map[string]uint64{errorDenyReason: 1},
		},
		{
			name: "not-supported is skipped, not denied",
			members: []member{
				{"runloop", 10, func(Invocation) (Verdict, error) { return Verdict{}, fmt.Errorf("engine wasm: %w", ErrNotSupported) }}, {"handler", 100, cont},
			},
			want:      []string{"runloop:{}", "handler:{}"},
			wantStats: func(s Stats) bool { return s.Skipped == 1 && s.Denials == 0 },
		},
		{
			name: "an unknown action is a deny",
			members: []member{
				{"a", 10, func(Invocation) (Verdict, error) { return Verdict{Action: Action(9)}, nil }}, {"b", 100, cont},
			},
			want:       []string{"a:{}"},
			wantDenied: map[string]uint64{errorDenyReason: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, _ := newTestDispatcher(t, Options{})
			rec := newRecorder()
			register(t, d, CapsuleACL{ID: "pub", Publish: []string{"tool.v1.*"}}, continueTarget)
			for _, m := range tt.members {
				register(t, d, CapsuleACL{ID: m.id, Subscribe: []string{"tool.v1.*"},
					Interceptors: []Interceptor{{Pattern: "tool.v1.execute.*", Handler: "h", Priority: m.priority}}}, rec.answer(m.answer))
			}
			res := mustPublish(t, d, Caller{Capsule: "pub", Principal: "alice"}, "tool.v1.execute.fs", `{}`)
			if res.Interceptors != len(tt.members) {
				t.Fatalf("Result.Interceptors = %d, want %d", res.Interceptors, len(tt.members))
			}
			var got []string
			for _, c := range rec.wait(t, len(tt.want)) {
				got = append(got, c.capsule+":"+c.payload)
				if c.principal != "alice" {
					t.Errorf("%s ran as %q, want alice", c.capsule, c.principal)
				}
			}
			rec.quiet(t, d)
			if !slices.Equal(got, tt.want) {
				t.Fatalf("calls = %v\nwant    %v", got, tt.want)
			}
			s := d.Stats()
			if tt.wantStats != nil && !tt.wantStats(s) {
				t.Errorf("stats = %+v", s)
			}
			for reason, n := range tt.wantDenied {
				if s.DenialsByReason[reason] != n {
					t.Errorf("DenialsByReason[%q] = %d, want %d (%v)", reason, s.DenialsByReason[reason], n, s.DenialsByReason)
				}
			}
			if s.Invocations != uint64(len(tt.want)) {
				t.Errorf("Invocations = %d, want %d", s.Invocations, len(tt.want))
			}
		})
	}
}

// TestEqualPriorityFansOut: interceptors sharing one priority all run, each
// on its own queue, concurrently, and one's Deny suppresses nobody.
func TestEqualPriorityFansOut(t *testing.T) {
	d, _ := newTestDispatcher(t, Options{})
	const n = 4
	started := make(chan string, n)
	release := make(chan struct{})
	register(t, d, CapsuleACL{ID: "pub", Publish: []string{"tool.v1.request.describe"}}, continueTarget)
	for i := range n {
		id := fmt.Sprintf("tool-%d", i)
		register(t, d, CapsuleACL{ID: id, Subscribe: []string{"tool.v1.request.describe"},
			Interceptors: []Interceptor{{Pattern: "tool.v1.request.describe", Handler: "describe", Priority: 100}}},
			targetFunc(func(ctx context.Context, inv Invocation) (Verdict, error) {
				started <- inv.Capsule
				// Every member must be running at once before any answers:
				// a sequential dispatcher never gets past the first.
				select {
				case <-release:
				case <-ctx.Done():
					return Verdict{}, ctx.Err()
				}
				if inv.Capsule == "tool-0" {
					return Verdict{Action: Deny, Reason: "no"}, nil
				}
				return Verdict{Action: Continue, Payload: []byte(`{"changed":true}`)}, nil
			}))
	}
	res := mustPublish(t, d, Caller{Capsule: "pub"}, "tool.v1.request.describe", `{}`)
	if res.Interceptors != n {
		t.Fatalf("Interceptors = %d, want %d", res.Interceptors, n)
	}
	var running []string
	for len(running) < n {
		// Equal priorities must fan out: all n run at once.
		running = append(running, testutil.WaitForRecv(t, waitLimit, fmt.Sprintf("call %d of %d to start concurrently (running %v)", len(running)+1, n, running), started))
	}
	close(release)
	settle(t, d)
	s := d.Stats()
	if s.Invocations != n || s.Denials != 1 || s.Continued != n-1 {
		t.Fatalf("stats = %+v, want %d invocations, 1 denial, %d continued", s, n, n-1)
	}
}

func TestInterceptorsLookup(t *testing.T) {
	d, _ := newTestDispatcher(t, Options{})
	reg := func(id string, ics ...Interceptor) {
		var keys []string
		for _, ic := range ics {
			keys = append(keys, ic.Pattern)
		}
		register(t, d, CapsuleACL{ID: id, Subscribe: keys, Interceptors: ics}, continueTarget)
	}
	reg("fs", Interceptor{Pattern: "tool.v1.execute.read_file", Handler: "read", Priority: 100},
		Interceptor{Pattern: "tool.v1.request.describe", Handler: "describe", Priority: 100})
	reg("audit", Interceptor{Pattern: "tool.v1.execute.*", Handler: "audit", Priority: 5},
		Interceptor{Pattern: "*.v1.execute.read_file", Handler: "audit2", Priority: 200})
	reg("http", Interceptor{Pattern: "tool.v1.execute.fetch", Handler: "fetch", Priority: 100},
		Interceptor{Pattern: "tool.v1.request.describe", Handler: "describe", Priority: 100})
	tests := []struct {
		topic string
		want  []string
	}{
		{"tool.v1.execute.read_file", []string{"audit", "fs"}}, // audit once, at its lowest priority
		{"tool.v1.execute.fetch", []string{"audit", "http"}},
		{"tool.v1.execute.read_file.result", []string{}},
		{"tool.v1.execute", []string{}},
		{"tool.v1.request.describe", []string{"fs", "http"}},
		{"llm.v1.execute.read_file", []string{"audit"}},
		{"nothing", []string{}},
	}
	for _, tt := range tests {
		if got := d.Interceptors(tt.topic); !slices.Equal(got, tt.want) {
			t.Errorf("Interceptors(%s) = %v, want %v", tt.topic, got, tt.want)
		}
	}
	// A tool's providers: the exact interceptors only, whatever the
	// wildcards of middleware match (DESIGN §4c). Asked twice, for the
	// cached answer too, which must not mix with Interceptors'.
	for range 2 {
		for _, tt := range []struct {
			topic string
			want  []string
		}{
			{"tool.v1.execute.read_file", []string{"fs"}},
			{"tool.v1.execute.fetch", []string{"http"}},
			{"tool.v1.execute.other", []string{}},
			{"llm.v1.execute.read_file", []string{}},
		} {
			if got := d.ExactInterceptors(tt.topic); !slices.Equal(got, tt.want) {
				t.Errorf("ExactInterceptors(%s) = %v, want %v", tt.topic, got, tt.want)
			}
		}
		if got := d.Interceptors("tool.v1.execute.read_file"); !slices.Equal(got, []string{"audit", "fs"}) {
			t.Errorf("Interceptors after ExactInterceptors = %v, want [audit fs]", got)
		}
	}
	d.Unregister("audit")
	if got := d.Interceptors("tool.v1.execute.read_file"); !slices.Equal(got, []string{"fs"}) {
		t.Errorf("after Unregister: %v, want [fs]", got)
	}
	if got := d.Interceptors("llm.v1.execute.read_file"); len(got) != 0 {
		t.Errorf("after Unregister: %v, want none", got)
	}
}

// TestInterceptorsAnswersAreRemembered: answers come from a per-snapshot
// cache; a caller changing its copy, a registration replacing the snapshot
// and more topics than the cache holds must all leave the answers right.
func TestInterceptorsAnswersAreRemembered(t *testing.T) {
	d, _ := newTestDispatcher(t, Options{})
	register(t, d, interceptorACL("fs", "tool.v1.execute.read_file", 100), continueTarget)
	first := d.Interceptors("tool.v1.execute.read_file")
	first[0] = "forged"
	if got := d.Interceptors("tool.v1.execute.read_file"); !slices.Equal(got, []string{"fs"}) {
		t.Fatalf("after the caller changed its copy: %v, want [fs]", got)
	}
	register(t, d, interceptorACL("audit", "tool.v1.execute.*", 5), continueTarget)
	if got := d.Interceptors("tool.v1.execute.read_file"); !slices.Equal(got, []string{"audit", "fs"}) {
		t.Fatalf("after a registration: %v, want [audit fs]", got)
	}
	for i := range 2 * maxOwnersCached {
		topic := fmt.Sprintf("tool.v1.execute.t%d", i)
		for range 2 {
			if got := d.Interceptors(topic); !slices.Equal(got, []string{"audit"}) {
				t.Fatalf("Interceptors(%s) = %v, want [audit]", topic, got)
			}
		}
	}
	if got := d.Interceptors("tool.v1.execute.read_file"); !slices.Equal(got, []string{"audit", "fs"}) {
		t.Fatalf("after filling the cache: %v, want [audit fs]", got)
	}
}

// TestInterceptorAnswersNeverChangeRoutes: a Deny or a payload replacement
// in a chain leaves what route subscribers receive untouched.
func TestInterceptorAnswersNeverChangeRoutes(t *testing.T) {
	d, _ := newTestDispatcher(t, Options{})
	rec := newRecorder()
	register(t, d, CapsuleACL{ID: "pub", Publish: []string{"a.b"}}, continueTarget)
	register(t, d, CapsuleACL{ID: "rewriter", Subscribe: []string{"a.b"}, Interceptors: []Interceptor{{Pattern: "a.b", Handler: "h", Priority: 1}}},
		rec.answer(func(Invocation) (Verdict, error) { return Verdict{Payload: []byte(`"rewritten"`)}, nil }))
	register(t, d, CapsuleACL{ID: "denier", Subscribe: []string{"a.b"}, Interceptors: []Interceptor{{Pattern: "a.b", Handler: "h", Priority: 2}}},
		rec.answer(func(Invocation) (Verdict, error) { return Verdict{Action: Deny, Reason: "no"}, nil }))
	register(t, d, CapsuleACL{ID: "sub", Subscribe: []string{"a.*"}}, continueTarget)
	route, err := d.Subscribe(Caller{Capsule: "sub"}, "a.*", false)
	if err != nil {
		t.Fatal(err)
	}
	res := mustPublish(t, d, Caller{Capsule: "pub", Principal: "alice"}, "a.b", `"original"`)
	if res.Routes != 1 || res.Interceptors != 2 {
		t.Fatalf("Result = %+v, want 1 route, 2 interceptors", res)
	}
	rec.wait(t, 2)
	settle(t, d)
	dl := recvOne(t, route)
	e := dl.Envelope
	if string(e.Payload) != `"original"` || e.SourceID != "pub" || e.Principal != "alice" || e.Topic != "a.b" || e.Seq == 0 || e.Timestamp == 0 {
		t.Fatalf("route received %+v", e)
	}
	if _, ok := route.TryRecv(); ok {
		t.Fatal("route received a second envelope")
	}
}
