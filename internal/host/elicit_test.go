package host

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/host/ask"
	"github.com/astrid-go/astrid/ipc"
)

// lockedBuffer is a log sink written from several goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// elicitFixture is a host with the elicit call wired: testFrontend's
// answers count, rogueCapsule may publish answers but is no frontend. Every
// log line, down to debug, goes to the returned buffer.
func elicitFixture(t *testing.T, window time.Duration) (fixture, *Capsule, *lockedBuffer) {
	t.Helper()
	f := newFixture(t)
	logs := &lockedBuffer{}
	f.deps.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	f.deps.Elicits = ask.NewElicits([]string{testFrontend}, window)
	for _, id := range []string{testFrontend, rogueCapsule} {
		err := f.deps.Dispatcher.Register(dispatch.CapsuleACL{ID: id,
			Publish: []string{ipc.ElicitResponseTopic("*")}, Subscribe: []string{ipc.ElicitRequestTopic, ipc.OnboardingTopic}}, nopTarget{})
		if err != nil {
			t.Fatal(err)
		}
	}
	return f, f.capsule(t, askerCapsule), logs
}

// elicitPerson is the frontend's view of one principal's elicit questions.
type elicitPerson struct {
	t         *testing.T
	f         fixture
	questions chan ipc.ElicitRequest
}

func listenElicit(t *testing.T, f fixture, principal string) *elicitPerson {
	t.Helper()
	questions := frontendHears(t, f, principal, ipc.ElicitRequestTopic, func(e *ipc.Envelope) (q ipc.ElicitRequest, ok bool) {
		return q, e.SourceID == ipc.KernelSourceID && q.UnmarshalJSON(ipc.GuestBytes(e.Payload)) == nil
	})
	return &elicitPerson{t: t, f: f, questions: questions}
}

func (p *elicitPerson) next() ipc.ElicitRequest {
	p.t.Helper()
	select {
	case q := <-p.questions:
		return q
	case <-time.After(30 * time.Second):
		p.t.Fatal("no question")
		return ipc.ElicitRequest{}
	}
}

// send publishes r as source for principal on the response topic of id.
func (p *elicitPerson) send(source, principal, id string, r ipc.ElicitResponse) error {
	b, err := r.MarshalJSON()
	if err != nil {
		return err
	}
	_, err = p.f.deps.Dispatcher.Publish(dispatch.Caller{Capsule: source, Principal: principal}, ipc.ElicitResponseTopic(id), b)
	return err
}

type elicited struct {
	ans hostapi.ElicitAnswer
	err error
}

func elicit(c *Capsule, principal string, q hostapi.ElicitRequest) <-chan elicited {
	out := make(chan elicited, 1)
	go func() {
		call, _ := c.Begin(context.Background(), principal)
		defer call.End()
		a, err := call.Elicit(q)
		out <- elicited{a, err}
	}()
	return out
}

func str(s string) *string { return &s }

// The question names the capsule and the call, shows the field as asked
// (control characters removed), and the frontend's answer comes back.
func TestElicitAsksAFrontend(t *testing.T) {
	f, c, _ := elicitFixture(t, 0)
	alice := listenElicit(t, f, "alice")
	call, _ := c.Begin(context.Background(), "alice")
	defer call.End()
	if err := call.SetCancelKey("call-3"); err != nil {
		t.Fatal(err)
	}
	got := make(chan elicited, 1)
	go func() {
		a, err := call.Elicit(hostapi.ElicitRequest{Key: "NAME", Kind: hostapi.ElicitText, Prompt: "Your\x1b[2J name\u202e", Description: "shown", Default: str("Agent")})
		got <- elicited{a, err}
	}()
	q := alice.next()
	fd := q.Field
	if q.CapsuleID != "asker" || q.CallID != "call-3" || fd.Key != "NAME" || fd.Prompt != "Your[2J name" || fd.FieldType.Kind != ipc.FieldText ||
		fd.Description == nil || *fd.Description != "shown" || fd.Default == nil || *fd.Default != "Agent" {
		t.Fatalf("question %+v", q)
	}
	if err := alice.send(testFrontend, "alice", q.RequestID, ipc.ElicitResponse{RequestID: q.RequestID, Value: str("Ada")}); err != nil {
		t.Fatal(err)
	}
	if a := <-got; a.err != nil || a.ans.Value != "Ada" {
		t.Fatalf("Elicit = %+v, %v", a.ans, a.err)
	}
}

// Every answer an attacker (or a broken frontend) could send is ignored,
// and the host keeps waiting: the honest answer that follows decides. The
// secret in play never reaches the log.
func TestElicitTakesOnlyAFittingAnswerFromItsFrontend(t *testing.T) {
	const secret = "sk-very-secret-4242"
	f, c, logs := elicitFixture(t, 0)
	alice := listenElicit(t, f, "alice")
	// Everything published under astrid.*, as a spy with every grant
	// would see it.
	spy, err := f.deps.Bus.Subscribe(bus.RouteSpec{Owner: ipc.KernelSourceID, Pattern: "astrid.*"})
	if err != nil {
		t.Fatal(err)
	}
	defer spy.Close()
	big := strings.Repeat("x", ipc.MaxElicitAnswer+1)
	for _, tc := range []struct {
		name   string
		q      hostapi.ElicitRequest
		honest ipc.ElicitResponse
		want   hostapi.ElicitAnswer
		// attacks are sent first; each is published (or refused by the
		// bus, wantRefused) and must change nothing.
		attacks func(id string) []attack
	}{
		{
			name: "secret", q: hostapi.ElicitRequest{Key: "API_KEY", Kind: hostapi.ElicitSecret, Prompt: "Enter your API key"},
			honest: ipc.ElicitResponse{Value: str(secret)}, want: hostapi.ElicitAnswer{Value: secret},
			attacks: func(id string) []attack {
				return []attack{
					{"answer from a capsule that is no frontend", rogueCapsule, "alice", id, ipc.ElicitResponse{RequestID: id, Value: str("rogue " + secret)}, false},
					{"answer for another principal's question", testFrontend, "bob", id, ipc.ElicitResponse{RequestID: id, Value: str("bob " + secret)}, false},
					{"answer naming another request in its payload", testFrontend, "alice", id, ipc.ElicitResponse{RequestID: "other", Value: str(secret)}, false},
					{"answer for an unknown id", testFrontend, "alice", "4f1e0000-0000-4000-8000-000000000000", ipc.ElicitResponse{RequestID: "4f1e0000-0000-4000-8000-000000000000", Value: str(secret)}, false},
					{"a secret answered with values", testFrontend, "alice", id, ipc.ElicitResponse{RequestID: id, Values: []string{secret}}, false},
					{"an answer over the cap", testFrontend, "alice", id, ipc.ElicitResponse{RequestID: id, Value: str(secret + big)}, false},
					{"a 10 MiB answer", testFrontend, "alice", id, ipc.ElicitResponse{RequestID: id, Value: str(secret + strings.Repeat("y", 10<<20))}, true},
					{"a cancel from a capsule that is no frontend", rogueCapsule, "alice", id, ipc.ElicitResponse{RequestID: id}, false},
				}
			},
		},
		{
			name: "select", q: hostapi.ElicitRequest{Key: "REGION", Kind: hostapi.ElicitSelect, Options: []string{"us-east-1", "eu-west-1"}, Default: str("us-east-1")},
			honest: ipc.ElicitResponse{Value: str("eu-west-1")}, want: hostapi.ElicitAnswer{Value: "eu-west-1"},
			attacks: func(id string) []attack {
				return []attack{
					{"a choice that is not an option", testFrontend, "alice", id, ipc.ElicitResponse{RequestID: id, Value: str("evil-1")}, false},
					{"an option with a trailing space", testFrontend, "alice", id, ipc.ElicitResponse{RequestID: id, Value: str("eu-west-1 ")}, false},
				}
			},
		},
		{
			name: "array", q: hostapi.ElicitRequest{Key: "TAGS", Kind: hostapi.ElicitArray},
			honest: ipc.ElicitResponse{Values: []string{"a", "b"}}, want: hostapi.ElicitAnswer{Values: []string{"a", "b"}},
			attacks: func(id string) []attack {
				return []attack{
					{"an array answered with value", testFrontend, "alice", id, ipc.ElicitResponse{RequestID: id, Value: str("a,b")}, false},
					{"too many values", testFrontend, "alice", id, ipc.ElicitResponse{RequestID: id, Values: make([]string, ipc.MaxElicitValues+1)}, false},
					{"values over the cap together", testFrontend, "alice", id, ipc.ElicitResponse{RequestID: id, Values: []string{big[:ipc.MaxElicitAnswer/2], big[:ipc.MaxElicitAnswer/2+1]}}, false},
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := elicit(c, "alice", tc.q)
			q := alice.next()
			for _, a := range tc.attacks(q.RequestID) {
				err := alice.send(a.source, a.principal, a.id, a.resp)
				if refused := err != nil; refused != a.refused {
					t.Fatalf("%s: publish error %v", a.name, err)
				}
			}
			select {
			case a := <-got:
				t.Fatalf("an attack answered the question: %+v, %v", a.ans, a.err)
			default:
			}
			honest := tc.honest
			honest.RequestID = q.RequestID
			if err := alice.send(testFrontend, "alice", q.RequestID, honest); err != nil {
				t.Fatal(err)
			}
			a := <-got
			if a.err != nil || a.ans.Value != tc.want.Value || strings.Join(a.ans.Values, ",") != strings.Join(tc.want.Values, ",") {
				t.Fatalf("Elicit = %+v, %v; want %+v", a.ans, a.err, tc.want)
			}
		})
	}
	if strings.Contains(logs.String(), secret) {
		t.Fatalf("the secret reached the log:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "not a frontend") || !strings.Contains(logs.String(), "does not fit the question") {
		t.Fatalf("the ignored answers were not logged:\n%s", logs.String())
	}
	// The host itself published the secret nowhere: only the frontend's
	// answer (and the attackers' own messages) carried it.
	for {
		d, ok := spy.TryRecv()
		if !ok {
			break
		}
		if d.Envelope.SourceID == ipc.KernelSourceID && bytes.Contains(d.Envelope.Payload, []byte("sk-very")) {
			t.Fatalf("the host published the secret on %s", d.Envelope.Topic)
		}
	}
}

type attack struct {
	name      string
	source    string
	principal string
	id        string
	resp      ipc.ElicitResponse
	refused   bool // the bus refuses it outright
}

// No frontend listening is a timeout at once; no answer within the window a
// timeout; the person cancelling is CodeDeclined; the call's cancel is
// CodeCancelled; no elicit state wired is unavailable.
func TestElicitFailures(t *testing.T) {
	f, c, _ := elicitFixture(t, 20*time.Millisecond)
	q := hostapi.ElicitRequest{Key: "NAME", Kind: hostapi.ElicitText}
	if a := <-elicit(c, "alice", q); hostapi.CodeOf(a.err) != hostapi.CodeTimeout || !strings.Contains(a.err.Error(), "no frontend is listening") {
		t.Fatalf("nobody listening: %v", a.err)
	}
	alice := listenElicit(t, f, "alice")
	if a := <-elicit(c, "alice", q); hostapi.CodeOf(a.err) != hostapi.CodeTimeout || !strings.Contains(a.err.Error(), "no answer within") {
		t.Fatalf("unanswered: %v", a.err)
	}
	alice.next()

	f.deps.Elicits = ask.NewElicits([]string{testFrontend}, time.Minute)
	c = f.capsule(t, strings.Replace(askerCapsule, "asker", "asker-two", 1))
	got := elicit(c, "alice", q)
	asked := alice.next()
	if err := alice.send(testFrontend, "alice", asked.RequestID, ipc.ElicitResponse{RequestID: asked.RequestID}); err != nil {
		t.Fatal(err)
	}
	if a := <-got; hostapi.CodeOf(a.err) != hostapi.CodeDeclined {
		t.Fatalf("declined: %+v, %v", a.ans, a.err)
	}

	call, _ := c.Begin(context.Background(), "alice")
	defer call.End()
	if err := call.SetCancelKey("call-9"); err != nil {
		t.Fatal(err)
	}
	cancelled := make(chan error, 1)
	go func() {
		_, err := call.Elicit(q)
		cancelled <- err
	}()
	alice.next()
	f.deps.Cancels.Cancel(errors.New("interrupted"), "call-9")
	if err := <-cancelled; hostapi.CodeOf(err) != hostapi.CodeCancelled {
		t.Fatalf("cancelled: %v", err)
	}

	f.deps.Elicits = nil
	c = f.capsule(t, strings.Replace(askerCapsule, "asker", "asker-three", 1))
	if a := <-elicit(c, "alice", q); hostapi.CodeOf(a.err) != hostapi.CodeUnavailable {
		t.Fatalf("no elicit state: %v", a.err)
	}
}

// A malformed question is refused before anyone is asked.
func TestElicitRefusesBadQuestions(t *testing.T) {
	f, c, _ := elicitFixture(t, 0)
	alice := listenElicit(t, f, "alice")
	for _, tc := range []struct {
		name string
		q    hostapi.ElicitRequest
		code hostapi.Code
	}{
		{"no key", hostapi.ElicitRequest{Kind: hostapi.ElicitText}, hostapi.CodeInvalid},
		{"a key with a dot-dot and slash", hostapi.ElicitRequest{Key: "../x", Kind: hostapi.ElicitText}, hostapi.CodeInvalid},
		{"a key with a newline", hostapi.ElicitRequest{Key: "A\nB", Kind: hostapi.ElicitText}, hostapi.CodeInvalid},
		{"a key too long", hostapi.ElicitRequest{Key: strings.Repeat("K", hostapi.MaxElicitKey+1), Kind: hostapi.ElicitText}, hostapi.CodeInvalid},
		{"an unknown kind", hostapi.ElicitRequest{Key: "K", Kind: "password"}, hostapi.CodeInvalid},
		{"a select without options", hostapi.ElicitRequest{Key: "K", Kind: hostapi.ElicitSelect}, hostapi.CodeInvalid},
		{"a select with an empty option", hostapi.ElicitRequest{Key: "K", Kind: hostapi.ElicitSelect, Options: []string{"a", ""}}, hostapi.CodeInvalid},
		{"a select with a control character", hostapi.ElicitRequest{Key: "K", Kind: hostapi.ElicitSelect, Options: []string{"a\x1b[31m"}}, hostapi.CodeInvalid},
		{"a select with a duplicate", hostapi.ElicitRequest{Key: "K", Kind: hostapi.ElicitSelect, Options: []string{"a", "a"}}, hostapi.CodeInvalid},
		{"a select with too many options", hostapi.ElicitRequest{Key: "K", Kind: hostapi.ElicitSelect, Options: make([]string, hostapi.MaxElicitOptions+1)}, hostapi.CodeInvalid},
		{"a select whose default is no option", hostapi.ElicitRequest{Key: "K", Kind: hostapi.ElicitSelect, Options: []string{"a"}, Default: str("b")}, hostapi.CodeInvalid},
		{"options on a text", hostapi.ElicitRequest{Key: "K", Kind: hostapi.ElicitText, Options: []string{"a"}}, hostapi.CodeInvalid},
		{"a secret with a default", hostapi.ElicitRequest{Key: "K", Kind: hostapi.ElicitSecret, Default: str("hunter2")}, hostapi.CodeInvalid},
		{"a prompt too long", hostapi.ElicitRequest{Key: "K", Kind: hostapi.ElicitText, Prompt: strings.Repeat("p", hostapi.MaxElicitPrompt+1)}, hostapi.CodeTooLarge},
		{"a description that is not UTF-8", hostapi.ElicitRequest{Key: "K", Kind: hostapi.ElicitText, Description: "\xff"}, hostapi.CodeInvalid},
		{"a schema on a text", hostapi.ElicitRequest{Key: "K", Kind: hostapi.ElicitText, Schema: []byte(testForm)}, hostapi.CodeInvalid},
		{"a form without a schema", hostapi.ElicitRequest{Key: "K", Kind: hostapi.ElicitForm}, hostapi.CodeInvalid},
		{"a form of 10,000 fields", hostapi.ElicitRequest{Key: "K", Kind: hostapi.ElicitForm, Schema: hugeForm(10000)}, hostapi.CodeInvalid},
		{"a form with a nested object", hostapi.ElicitRequest{Key: "K", Kind: hostapi.ElicitForm, Schema: []byte(`{"type":"object","properties":{"a":{"type":"object"}}}`)}, hostapi.CodeInvalid},
		{"a form with a default beside its schema", hostapi.ElicitRequest{Key: "K", Kind: hostapi.ElicitForm, Schema: []byte(testForm), Default: str("x")}, hostapi.CodeInvalid},
	} {
		if a := <-elicit(c, "alice", tc.q); hostapi.CodeOf(a.err) != tc.code {
			t.Errorf("%s: %v, want %v", tc.name, a.err, tc.code)
		}
	}
	select {
	case q := <-alice.questions:
		t.Fatalf("asked a bad question: %+v", q)
	default:
	}
}

// testForm is a form of three typed fields, one required.
const testForm = `{"type":"object","properties":{"name":{"type":"string","default":"Ada"},"age":{"type":"integer"},"tags":{"type":"array","items":{"enum":["a","b"]}}},"required":["name"]}`

// hugeForm is a form of n string fields.
func hugeForm(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"f%d":{"type":"string"}`, i)
	}
	b.WriteString(`}}`)
	return []byte(b.String())
}

// A form question carries its checked schema to the frontend; answers
// that do not fit it (a value instead of content, a wrong type, a missing
// required field, a field it does not have) are ignored, and the fitting
// content comes back to the capsule.
func TestElicitAsksAForm(t *testing.T) {
	f, c, _ := elicitFixture(t, 0)
	alice := listenElicit(t, f, "alice")
	got := elicit(c, "alice", hostapi.ElicitRequest{Key: "profile", Kind: hostapi.ElicitForm, Prompt: "Who are you?", Schema: []byte(testForm)})
	q := alice.next()
	if q.Form == nil || len(q.Form.Schema.Properties) != 3 || q.Field.Key != "profile" || q.Field.Prompt != "Who are you?" {
		t.Fatalf("question %+v", q)
	}
	for _, bad := range []ipc.ElicitResponse{
		{Value: str("Ada")},
		{Content: []byte(`{"name":"Ada","age":"old"}`)},
		{Content: []byte(`{"age":3}`)},
		{Content: []byte(`{"name":"Ada","admin":true}`)},
		{Content: []byte(`{"name":"Ada","tags":["c"]}`)},
	} {
		bad.RequestID = q.RequestID
		if err := alice.send(testFrontend, "alice", q.RequestID, bad); err != nil {
			t.Fatal(err)
		}
	}
	answer := `{"name":"Grace","age":85,"tags":["a"]}`
	if err := alice.send(testFrontend, "alice", q.RequestID, ipc.ElicitResponse{RequestID: q.RequestID, Content: []byte(answer)}); err != nil {
		t.Fatal(err)
	}
	if a := <-got; a.err != nil || string(a.ans.Content) != answer {
		t.Fatalf("Elicit = %+v, %v", a.ans, a.err)
	}
	// Declined: an answer with nothing in it.
	got = elicit(c, "alice", hostapi.ElicitRequest{Key: "profile", Kind: hostapi.ElicitForm, Schema: []byte(testForm)})
	q = alice.next()
	if err := alice.send(testFrontend, "alice", q.RequestID, ipc.ElicitResponse{RequestID: q.RequestID}); err != nil {
		t.Fatal(err)
	}
	if a := <-got; hostapi.CodeOf(a.err) != hostapi.CodeDeclined {
		t.Fatalf("declined form: %+v, %v", a.ans, a.err)
	}
}
