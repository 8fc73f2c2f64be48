package approval_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/capsules/approval"
	"github.com/astrid-go/astrid/capsules/fs"
	"github.com/astrid-go/astrid/capsules/router"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/manifest"
	"github.com/astrid-go/astrid/sdk/sdktest"
)

const (
	alice = ipc.DefaultPrincipal
	bob   = "bob"
)

// underTest is the approval layer (answered by the sdktest approver
// frontend, plus config) and the real file tools: write_file and
// create_directory are mutable, read_file and list_directory not.
func underTest(config map[string]string) []sdktest.Capsule {
	cfg := map[string]string{approval.ApproversKey: sdktest.ApproverID}
	for k, v := range config {
		cfg[k] = v
	}
	return []sdktest.Capsule{
		{Manifest: approval.Manifest, New: approval.New, Config: cfg},
		{Manifest: fs.Manifest, New: fs.New},
	}
}

func boot(t *testing.T, extra ...sdktest.Capsule) *sdktest.Kernel {
	t.Helper()
	return sdktest.New(t, append(underTest(nil), extra...)...)
}

func write(path, content string) map[string]string {
	return map[string]string{"file_path": path, "content": content}
}

// fileIs checks the workspace file's content ("" for absent).
func fileIs(t *testing.T, k *sdktest.Kernel, name, want string) {
	t.Helper()
	got, err := os.ReadFile(filepath.Join(k.Workspace, name))
	if os.IsNotExist(err) && want == "" {
		return
	}
	if err != nil || string(got) != want {
		t.Fatalf("%s: %q (%v), want %q", name, got, err, want)
	}
}

// drain makes a read-only call for principal and waits for it. The
// approval layer handles one principal's events one at a time in arrival
// order, and the call passes through it, so once the call is answered
// every answer published for principal before it has been handled.
func drain(t *testing.T, k *sdktest.Kernel, principal string) {
	t.Helper()
	if res := k.CallToolAs(principal, "list_directory", map[string]string{"dir_path": "."}); res.IsError {
		t.Fatalf("list_directory: %s", res.Content)
	}
}

// tickUntilAnswered publishes watchdog ticks for principal until call has
// its answer. The real watchdog ticks every 5 s; this ticks faster (the
// call's own timeout bounds the loop).
func tickUntilAnswered(k *sdktest.Kernel, principal string, call *sdktest.PendingCall) {
	for {
		select {
		case <-call.Done():
			return
		default:
			k.WatchdogTick(principal)
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// deniedWhenAsked calls tool for principal, checks that the person is
// asked about it, denies, and checks the call's refusal.
func deniedWhenAsked(t *testing.T, k *sdktest.Kernel, questions *sdktest.Approvals, principal, tool string, args any) {
	t.Helper()
	call := k.StartTool(principal, "", tool, args)
	q, _ := questions.Next()
	if q.Action != tool {
		t.Fatalf("question about %q, want %q", q.Action, tool)
	}
	k.Answer(principal, q.RequestID, ipc.DecisionDeny)
	notApproved(t, call.Wait(), tool+" was not approved by the user")
}

func notApproved(t *testing.T, res ipc.ToolCallResult, want string) {
	t.Helper()
	if !res.IsError || res.Content != want {
		t.Fatalf("result %+v, want the error %q", res, want)
	}
}

func succeeded(t *testing.T, res ipc.ToolCallResult) {
	t.Helper()
	if res.IsError {
		t.Fatalf("result is an error: %s", res.Content)
	}
}

func TestRegistrationsMatchManifest(t *testing.T) {
	sdktest.CheckRegistrations(t, approval.Manifest, approval.New())
}

// A read-only tool runs at once and nobody is asked; an unknown tool is
// left to the router, which names it.
func TestReadOnlyAndUnknownToolsPassWithoutAQuestion(t *testing.T) {
	k := boot(t)
	questions := k.Approvals(alice)
	if err := os.WriteFile(filepath.Join(k.Workspace, "notes.txt"), []byte("kept"), 0o600); err != nil {
		t.Fatal(err)
	}
	if res := k.CallTool("read_file", map[string]string{"file_path": "notes.txt"}); res.IsError || !strings.Contains(res.Content, "kept") {
		t.Fatalf("read_file: %+v", res)
	}
	if res := k.CallTool("no_such_tool", map[string]string{}); !res.IsError || !strings.Contains(res.Content, "Unknown tool") {
		t.Fatalf("unknown tool: %+v, want the router's error", res)
	}
	if q := questions.Pending(); len(q) != 0 {
		t.Fatalf("asked %+v", q)
	}
}

// A mutable call waits for the person; the question names the tool, shows
// the arguments, says which capsule provides it and carries the call id;
// approved, the call runs, once: a second answer to the same question runs
// nothing, and the next call asks again.
func TestApprovedCallRunsOnce(t *testing.T) {
	k := boot(t)
	questions := k.Approvals(alice)
	call := k.StartTool(alice, "call-approved-1", "write_file", write("a.txt", "from the model"))
	q, source := questions.Next()
	if source != approval.ID || q.Action != "write_file" || q.CallID != "call-approved-1" || q.RequestID == "" {
		t.Fatalf("question %+v from %s", q, source)
	}
	if q.Resource != `{"content":"from the model","file_path":"a.txt"}` {
		t.Fatalf("resource %q: want the arguments exactly", q.Resource)
	}
	for _, want := range []string{"astrid-capsule-fs", "changing things", "every write_file call"} {
		if !strings.Contains(q.Reason, want) {
			t.Fatalf("reason %q does not say %q", q.Reason, want)
		}
	}
	fileIs(t, k, "a.txt", "")
	k.Answer(alice, q.RequestID, ipc.DecisionApprove)
	succeeded(t, call.Wait())
	fileIs(t, k, "a.txt", "from the model")

	// The person edits the file; approving the settled question again
	// must not write it a second time.
	if err := os.WriteFile(filepath.Join(k.Workspace, "a.txt"), []byte("edited"), 0o600); err != nil {
		t.Fatal(err)
	}
	k.Answer(alice, q.RequestID, ipc.DecisionApprove)
	drain(t, k, alice)
	fileIs(t, k, "a.txt", "edited")

	// "approve" kept nothing: the next call is asked about.
	next := k.StartTool(alice, "", "write_file", write("a.txt", "again"))
	q2, _ := questions.Next()
	if q2.RequestID == q.RequestID {
		t.Fatalf("request id %q reused", q.RequestID)
	}
	k.Answer(alice, q2.RequestID, ipc.DecisionDeny)
	notApproved(t, next.Wait(), "write_file was not approved by the user")
	fileIs(t, k, "a.txt", "edited")
}

// A denial reaches the model as an is_error result and nothing runs; a
// later approval of the same question changes nothing.
func TestDeniedCallIsAnErrorResult(t *testing.T) {
	k := boot(t)
	questions := k.Approvals(alice)
	call := k.StartTool(alice, "", "write_file", write("b.txt", "x"))
	q, _ := questions.Next()
	k.Answer(alice, q.RequestID, ipc.DecisionDeny)
	notApproved(t, call.Wait(), "write_file was not approved by the user")
	k.Answer(alice, q.RequestID, ipc.DecisionApprove)
	drain(t, k, alice)
	fileIs(t, k, "b.txt", "")
}

// A question nobody answers lapses on the watchdog tick after
// approval_timeout_secs, and the call is refused saying so; an answer
// arriving later runs nothing.
func TestUnansweredQuestionTimesOut(t *testing.T) {
	k := sdktest.New(t, underTest(map[string]string{approval.TimeoutKey: "0.05"})...)
	questions := k.Approvals(alice)
	call := k.StartTool(alice, "", "write_file", write("c.txt", "x"))
	q, _ := questions.Next()
	tickUntilAnswered(k, alice, call)
	notApproved(t, call.Wait(), "write_file was not approved by the user: no answer within 0.05 s")
	k.Answer(alice, q.RequestID, ipc.DecisionApprove)
	drain(t, k, alice)
	fileIs(t, k, "c.txt", "")
}

// approve_session allows that tool for that principal from then on
// without asking; another tool, or another principal, is still asked.
func TestApproveSessionAllowsTheToolWithoutAsking(t *testing.T) {
	k := boot(t)
	questions := k.Approvals(alice)
	first := k.StartTool(alice, "", "write_file", write("d.txt", "one"))
	q, _ := questions.Next()
	k.Answer(alice, q.RequestID, ipc.DecisionApproveSession)
	succeeded(t, first.Wait())

	succeeded(t, k.CallTool("write_file", write("d.txt", "two")))
	fileIs(t, k, "d.txt", "two")
	if q := questions.Pending(); len(q) != 0 {
		t.Fatalf("asked again after approve_session: %+v", q)
	}

	deniedWhenAsked(t, k, questions, alice, "create_directory", map[string]string{"dir_path": "sub"})
	deniedWhenAsked(t, k, k.Approvals(bob), bob, "write_file", write("e.txt", "bob"))
}

// A capsule unloaded for good (removed, then the daemon's rescan) loses
// the session allowances given to its tools: loaded again under the same
// id, its tool is asked about anew. Unloading another capsule keeps them.
func TestSessionAllowanceEndsWithTheCapsule(t *testing.T) {
	k := boot(t)
	questions := k.Approvals(alice)
	first := k.StartTool(alice, "", "write_file", write("u.txt", "one"))
	q, _ := questions.Next()
	k.Answer(alice, q.RequestID, ipc.DecisionApproveSession)
	succeeded(t, first.Wait())

	rogue := sdktest.Capsule{Manifest: []byte(rogueManifest), New: newRogue}
	if err := k.Load(rogue); err != nil {
		t.Fatal(err)
	}
	if err := k.Unload("fixture-rogue"); err != nil {
		t.Fatal(err)
	}
	succeeded(t, k.CallTool("write_file", write("u.txt", "two")))
	if q := questions.Pending(); len(q) != 0 {
		t.Fatalf("asked again after another capsule was unloaded: %+v", q)
	}

	if err := k.Unload("astrid-capsule-fs"); err != nil {
		t.Fatal(err)
	}
	if err := k.Load(sdktest.Capsule{Manifest: fs.Manifest, New: fs.New}); err != nil {
		t.Fatal(err)
	}
	deniedWhenAsked(t, k, questions, alice, "write_file", write("u.txt", "three"))
	fileIs(t, k, "u.txt", "two")
}

// approve_always is kept on disk: after a restart on the same home the
// tool runs without a question, while a session allowance is gone.
func TestApproveAlwaysSurvivesARestart(t *testing.T) {
	k := boot(t)
	questions := k.Approvals(alice)
	call := k.StartTool(alice, "", "write_file", write("f.txt", "before"))
	q, _ := questions.Next()
	k.Answer(alice, q.RequestID, ipc.DecisionApproveAlways)
	succeeded(t, call.Wait())
	dir := k.StartTool(alice, "", "create_directory", map[string]string{"dir_path": "d1"})
	q, _ = questions.Next()
	k.Answer(alice, q.RequestID, ipc.DecisionApproveSession)
	succeeded(t, dir.Wait())

	k = k.Restart(underTest(nil)...)
	questions = k.Approvals(alice)
	succeeded(t, k.CallTool("write_file", write("f.txt", "after")))
	fileIs(t, k, "f.txt", "after")

	deniedWhenAsked(t, k, questions, alice, "create_directory", map[string]string{"dir_path": "d2"})
}

// Answers that must change nothing: from another principal, from a capsule
// that is not an approver frontend, to an unknown id. Each is made and
// handled before the real answer (a deny), which then still decides.
func TestAnswersThatMustHaveNoEffect(t *testing.T) {
	k := boot(t, sdktest.Capsule{Manifest: []byte(rogueManifest), New: newRogue})
	questions := k.Approvals(alice)
	for _, tc := range []struct {
		name  string
		forge func(requestID string)
	}{
		{"another principal answers", func(id string) {
			k.Answer(bob, id, ipc.DecisionApproveAlways)
			drain(t, k, bob)
		}},
		{"a capsule that is not a frontend answers", func(id string) {
			if res := k.CallTool("forge_answer", map[string]string{"request_id": id, "decision": ipc.DecisionApprove}); res.Content != "answered" {
				t.Fatalf("the rogue did not answer: %+v", res)
			}
			drain(t, k, alice)
		}},
		{"an answer to an unknown id", func(string) {
			k.Answer(alice, "appr-default-unknown", ipc.DecisionApprove)
			drain(t, k, alice)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			call := k.StartTool(alice, "", "write_file", write("g.txt", tc.name))
			q, _ := questions.Next()
			tc.forge(q.RequestID)
			fileIs(t, k, "g.txt", "")
			k.Answer(alice, q.RequestID, ipc.DecisionDeny)
			notApproved(t, call.Wait(), "write_file was not approved by the user")
		})
	}
	// Bob was never allowed anything by Alice's questions.
	deniedWhenAsked(t, k, k.Approvals(bob), bob, "write_file", write("h.txt", "bob"))
}

// Without an approvers setting only the CLI counts: the test frontend's
// approval is ignored and the question lapses.
func TestOnlyConfiguredApproversCount(t *testing.T) {
	k := sdktest.New(t, sdktest.Capsule{Manifest: approval.Manifest, New: approval.New, Config: map[string]string{approval.TimeoutKey: "0.05"}},
		sdktest.Capsule{Manifest: fs.Manifest, New: fs.New})
	questions := k.Approvals(alice)
	call := k.StartTool(alice, "", "write_file", write("i.txt", "x"))
	q, _ := questions.Next()
	k.Answer(alice, q.RequestID, ipc.DecisionApprove)
	tickUntilAnswered(k, alice, call)
	notApproved(t, call.Wait(), "write_file was not approved by the user: no answer within 0.05 s")
	fileIs(t, k, "i.txt", "")
}

// Parallel mutable calls are all asked before any is answered (no handler
// waits for the person), and each answer settles its own call.
func TestParallelMutableCallsAreAskedConcurrently(t *testing.T) {
	k := boot(t)
	questions := k.Approvals(alice)
	decisions := map[string]string{"p1.txt": ipc.DecisionApprove, "p2.txt": ipc.DecisionDeny, "p3.txt": ipc.DecisionApprove}
	calls := map[string]*sdktest.PendingCall{}
	for name := range decisions {
		calls[name] = k.StartTool(alice, "call-"+strings.TrimSuffix(name, ".txt"), "write_file", write(name, name))
	}
	asked := map[string]ipc.ApprovalRequired{}
	for range decisions {
		q, _ := questions.Next()
		asked[q.CallID] = q
	}
	for name, d := range decisions {
		q, ok := asked["call-"+strings.TrimSuffix(name, ".txt")]
		if !ok {
			t.Fatalf("no question for %s among %+v", name, asked)
		}
		k.Answer(alice, q.RequestID, d)
	}
	for name, d := range decisions {
		res := calls[name].Wait()
		if d == ipc.DecisionDeny {
			notApproved(t, res, "write_file was not approved by the user")
			fileIs(t, k, name, "")
			continue
		}
		succeeded(t, res)
		fileIs(t, k, name, name)
	}
}

// A cancelled call's question is withdrawn: approving it afterwards runs
// nothing.
func TestCancelWithdrawsTheQuestion(t *testing.T) {
	k := boot(t)
	questions := k.Approvals(alice)
	call := k.StartTool(alice, "", "write_file", write("j.txt", "x"))
	q, _ := questions.Next()
	call.Cancel()
	k.Answer(alice, q.RequestID, ipc.DecisionApprove)
	drain(t, k, alice)
	fileIs(t, k, "j.txt", "")
}

// The tool plumbing is the kernel's to guard (DESIGN §4c): a capsule
// without tool_middleware cannot send a call straight to the provider
// (its publish is refused), nor load with a manifest that asks to.
func TestDirectPublishToAToolCannotBypassApproval(t *testing.T) {
	k := boot(t, sdktest.Capsule{Manifest: []byte(rogueManifest), New: newRogue})
	questions := k.Approvals(alice)
	res := k.CallTool("sneak_write", write("k.txt", "sneaked"))
	if !strings.HasPrefix(res.Content, "refused: ") || !strings.Contains(res.Content, "tool.v1.execute.write_file") {
		t.Fatalf("the direct publish was not refused: %+v", res)
	}
	drain(t, k, alice)
	fileIs(t, k, "k.txt", "")
	if q := questions.Pending(); len(q) != 0 {
		t.Fatalf("asked %+v", q)
	}

	k2 := boot(t)
	err := k2.Load(sdktest.Capsule{Manifest: []byte(rogueManifestWithBypass), New: newRogue})
	if err == nil || !strings.Contains(err.Error(), "tool_middleware") || !strings.Contains(err.Error(), "tool.v1.execute.write_file") {
		t.Fatalf("a manifest asking to publish tool.v1.execute.write_file loaded (%v)", err)
	}
}

// Capability tokens are a tool_middleware holder's: a capsule without the
// grant that tries to mint itself one ("this session" or "always") or to
// check one is denied, and the tool is still asked about.
func TestACapsuleWithoutToolMiddlewareCannotMintOrCheckTokens(t *testing.T) {
	k := boot(t, sdktest.Capsule{Manifest: []byte(rogueManifest), New: newRogue})
	res := k.CallTool("mint_token", map[string]string{})
	lines := strings.Split(res.Content, "\n")
	for i, want := range []string{"mint session=true: ", "mint session=false: ", "check: "} {
		if i >= len(lines) || !strings.HasPrefix(lines[i], want) || !strings.Contains(lines[i], "does not hold tool_middleware") {
			t.Fatalf("%q was not denied: %+v", want, res)
		}
	}
	deniedWhenAsked(t, k, k.Approvals(alice), alice, "write_file", write("m.txt", "x"))
	fileIs(t, k, "m.txt", "")
}

// A capsule that describes another's mutable tool as read-only, ahead of
// it in the fan-out, does not get its calls past the question.
func TestAToolDescribedByAnotherCapsuleIsStillAsked(t *testing.T) {
	k := boot(t, sdktest.Capsule{Manifest: []byte(liarManifest), New: newLiar})
	questions := k.Approvals(alice)
	call := k.StartTool(alice, "", "write_file", write("l.txt", "x"))
	q, _ := questions.Next()
	if !strings.Contains(q.Reason, "treated as changing things") {
		t.Fatalf("reason %q", q.Reason)
	}
	k.Answer(alice, q.RequestID, ipc.DecisionDeny)
	notApproved(t, call.Wait(), "write_file was not approved by the user")
}

// asks_approval counts only from the capsule that provides the tool. An
// impostor cannot even declare it for the file capsule's write_file: the
// kernel refuses a [[tool]] entry for a tool another capsule provides (so
// its describe answer is never stamped with it), and write_file's calls
// are still asked about.
func TestAsksApprovalForAnotherCapsulesToolIsRefused(t *testing.T) {
	k := boot(t)
	err := k.Load(sdktest.Capsule{Manifest: []byte(impostorManifest), New: newImpostor})
	if err == nil || !strings.Contains(err.Error(), "cannot provide tool write_file") {
		t.Fatalf("the impostor loaded (%v)", err)
	}
	questions := k.Approvals(alice)
	call := k.StartTool(alice, "", "write_file", write("i.txt", "x"))
	q, source := questions.Next()
	if source != approval.ID || q.Action != "write_file" {
		t.Fatalf("question %+v from %s", q, source)
	}
	k.Answer(alice, q.RequestID, ipc.DecisionDeny)
	notApproved(t, call.Wait(), "write_file was not approved by the user")
	fileIs(t, k, "i.txt", "")
}

// A capsule ahead of the provider in the fan-out whose code claims
// asks_approval for write_file: the kernel stamps the claim away, and the
// approval capsule would not take it from a capsule other than the
// provider anyway; the call is asked about.
func TestAsksApprovalClaimedInCodeIsIgnored(t *testing.T) {
	k := boot(t, sdktest.Capsule{Manifest: []byte(bareImpostorManifest), New: newBareImpostor})
	questions := k.Approvals(alice)
	call := k.StartTool(alice, "", "write_file", write("j.txt", "x"))
	q, source := questions.Next()
	if source != approval.ID || q.Action != "write_file" {
		t.Fatalf("question %+v from %s", q, source)
	}
	k.Answer(alice, q.RequestID, ipc.DecisionDeny)
	notApproved(t, call.Wait(), "write_file was not approved by the user")
	fileIs(t, k, "j.txt", "")
}

// Long arguments are cut visibly, and characters that would make the text
// read as something else are shown escaped.
func TestQuestionShowsArgumentsFaithfully(t *testing.T) {
	k := boot(t)
	questions := k.Approvals(alice)
	call := k.StartTool(alice, "", "write_file", write("evil\u202etxt.sh", strings.Repeat("é", 2000)))
	q, _ := questions.Next()
	if !strings.Contains(q.Resource, `evil\u202etxt.sh`) || strings.ContainsRune(q.Resource, '\u202e') {
		t.Fatalf("resource does not escape the override: %q", q.Resource[:60])
	}
	if !strings.Contains(q.Resource, "[truncated: ") || len(q.Resource) > approval.MaxResourceBytes+64 {
		t.Fatalf("resource of %d bytes not cut visibly: ...%q", len(q.Resource), q.Resource[len(q.Resource)-60:])
	}
	k.Answer(alice, q.RequestID, ipc.DecisionDeny)
	notApproved(t, call.Wait(), "write_file was not approved by the user")
}

// The manifest holds the tool_middleware grant (what `astrid capsule check`
// shows as HIGH RISK), loads without a warning, and puts the interceptor
// ahead of the router's.
func TestManifestRunsAheadOfTheRouterWithTheGrant(t *testing.T) {
	m, diags := manifest.Parse(approval.Manifest, manifest.FileName, "")
	if m == nil || len(diags) != 0 {
		t.Fatalf("diagnostics: %v", diags)
	}
	if !m.Capabilities.ToolMiddleware || m.ID() != approval.ID {
		t.Fatalf("%s: tool_middleware %v", m.ID(), m.Capabilities.ToolMiddleware)
	}
	r, _ := manifest.Parse(router.Manifest, manifest.FileName, "")
	prio := func(m *manifest.Manifest) uint32 {
		for _, i := range m.Interceptors() {
			if i.Pattern == ipc.ToolRequestExecuteTopic {
				return i.Priority
			}
		}
		t.Fatalf("%s does not intercept %s", m.ID(), ipc.ToolRequestExecuteTopic)
		return 0
	}
	if prio(m) >= prio(r) {
		t.Fatalf("approval's priority %d is not ahead of the router's %d", prio(m), prio(r))
	}
}

// A call requested again while its question is open is not run by an
// allowance given meanwhile: its one question settles it.
func TestARepeatedCallIsSettledByItsQuestion(t *testing.T) {
	k := boot(t)
	questions := k.Approvals(alice)
	first := k.StartTool(alice, "call-dup", "write_file", write("m.txt", "dup"))
	q1, _ := questions.Next()
	other := k.StartTool(alice, "", "write_file", write("n.txt", "n"))
	q2, _ := questions.Next()
	k.Answer(alice, q2.RequestID, ipc.DecisionApproveSession)
	succeeded(t, other.Wait())
	k.PublishToolRequest(alice, "call-dup", "write_file", write("m.txt", "dup"))
	k.Answer(alice, q1.RequestID, ipc.DecisionDeny)
	notApproved(t, first.Wait(), "write_file was not approved by the user")
	drain(t, k, alice)
	fileIs(t, k, "m.txt", "")
}

// A call id too long to keep passes for a read-only tool and is refused,
// not asked about, for a mutable one.
func TestAnUnkeepableCallIDIsRefusedOnlyWhenItMustBeKept(t *testing.T) {
	k := boot(t)
	long := strings.Repeat("x", 600)
	if res := k.StartTool(alice, long, "list_directory", map[string]string{"dir_path": "."}).Wait(); res.IsError {
		t.Fatalf("read-only call: %+v", res)
	}
	res := k.StartTool(alice, long, "write_file", write("o.txt", "x")).Wait()
	if !res.IsError || !strings.Contains(res.Content, "cannot keep its call") {
		t.Fatalf("mutable call: %+v", res)
	}
	fileIs(t, k, "o.txt", "")
}
