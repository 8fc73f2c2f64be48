package webview

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/astrid-go/astrid/internal/admin"
	"github.com/astrid-go/astrid/internal/webview/webviewtest"
	"github.com/astrid-go/astrid/ipc"
)

// js quotes s as a JavaScript string literal.
func js(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// hostileAnswer is a markdown answer with every way to put markup or a
// script on the page that markdown offers.
const hostileAnswer = "# Result\n\nSome **bold** text:\n\n- one\n- two\n\n```go\nx := \"<b>1</b>\"\n```\n\n" +
	"| File | Lines |\n|:--|--:|\n| main.go | 120 |\n\n" +
	"[docs](https://example.com/docs) [click](javascript:document.body.dataset.pwned=1) [me too](&#106;avascript:alert(1))\n\n" +
	"<img src=x onerror=\"document.body.dataset.pwned=1\">\n\n<script>document.body.dataset.pwned=1</script>\n"

// In a real browser, through the admin server's token flow: 200 capsules
// and 1000 topics render (every node drawn, the topic table bounded and
// saying how many more there are), names holding markup show as text and
// run nothing, the token has left the address bar and is invisible to
// scripts, the page updates live as events arrive, and an answer's
// markdown is rendered with its raw HTML as text and only safe links.
func TestBrowserRendersLargeHostileKernel(t *testing.T) {
	ctx := webviewtest.Browser(t)
	src := newFakeSource(syntheticNodes(200))
	src.counters = Counters{Published: 1234, Drops: []Drop{{Where: "interceptor", Reason: "denied: " + htmlTopic, Count: 3}}}
	v, err := New(Options{Source: src, Interval: 100 * time.Millisecond, Notice: "sandbox: OFF <b>unconfined</b>"})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	srv, err := admin.New(admin.Options{Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	srv.Handle("/", v)
	srv.Serve()
	defer srv.Close(context.Background())

	webviewtest.Do(t, ctx, "open the page", chromedp.Navigate(srv.TokenURL()))
	webviewtest.WaitTrue(t, ctx, "201 graph nodes", `document.querySelectorAll('#graph-nodes .node').length === 201`)
	webviewtest.WaitTrue(t, ctx, "the live status", `document.getElementById('status').textContent === 'live'`)
	webviewtest.WaitTrue(t, ctx, "201 capsule rows", `document.querySelectorAll('#capsules tbody tr').length === 201`)

	// The rates of 1000 topics arrive over the event stream.
	src.ring().publish("syn-capsule-001", syntheticTopics(1000)...)
	webviewtest.WaitTrue(t, ctx, "the topic table, bounded", `document.querySelectorAll('#topics tbody tr').length === 200 &&
		document.getElementById('topics-more').textContent.startsWith('800 more topics')`)

	// A turn with a tool call appears while it runs, then as ended.
	now := time.Now()
	ictx, _ := json.Marshal(ipc.PromptContext{TurnID: "t1"})
	for _, e := range []*ipc.Envelope{
		envelope(t, ipc.UserPromptTopic, "default", now, ipc.UserInput{Text: "<i>read</i> it", SessionID: "s1", Context: ictx}),
		envelope(t, ipc.AgentToolStartedTopic, "default", now, ipc.AgentToolStarted{SessionID: "s1", TurnID: "t1", CallID: "c1", Name: "read_file", Arguments: json.RawMessage(`{"file_path":"<svg onload=alert(1)>"}`)}),
	} {
		src.turns.ch <- deliveryOf(e)
	}
	webviewtest.WaitTrue(t, ctx, "the running turn", `[...document.querySelectorAll('#turns .turn.running .tool')].some(e => e.textContent.startsWith('… read_file'))`)
	for _, e := range []*ipc.Envelope{
		envelope(t, ipc.AgentToolFinishedTopic, "default", now, ipc.AgentToolFinished{SessionID: "s1", TurnID: "t1", CallID: "c1", Name: "read_file", DurationMS: 12, Summary: "<b>bold</b>"}),
		envelope(t, ipc.AgentResponseTopic, "default", now.Add(time.Second), ipc.AgentResponse{SessionID: "s1", TurnID: "t1", IsFinal: true, Outcome: ipc.OutcomeAnswer, Text: hostileAnswer}),
	} {
		src.turns.ch <- deliveryOf(e)
	}
	webviewtest.WaitTrue(t, ctx, "the ended turn", `[...document.querySelectorAll('#turns .turn:not(.running) .tool')].some(e => e.textContent.startsWith('✓ read_file') && e.textContent.includes('12 ms: <b>bold</b>'))`)
	webviewtest.WaitTrue(t, ctx, "the answer rendered", `document.querySelectorAll('#turns .turn:not(.running) .answer table').length === 1`)

	// An edit's call shows its change as a diff, as text.
	src.turns.ch <- deliveryOf(envelope(t, ipc.AgentToolStartedTopic, "default", now, ipc.AgentToolStarted{SessionID: "s1", TurnID: "t2", CallID: "c2", Name: "replace_in_file",
		Arguments: json.RawMessage(`{"file_path":"a.txt","old_string":"<b>old</b>","new_string":"new\nlines"}`)}))
	webviewtest.WaitTrue(t, ctx, "the edit as a diff", `[...document.querySelectorAll('#turns .change')].some(c =>
		[...c.querySelectorAll('.del')].map(e => e.textContent).join('|') === '- <b>old</b>' &&
		[...c.querySelectorAll('.add')].map(e => e.textContent).join('|') === '+ new|+ lines')`)

	// A value a capsule asks the principal for shows as pending, as text,
	// until a call of theirs ends.
	src.turns.ch <- deliveryOf(envelope(t, ipc.OnboardingTopic, "default", time.Now(), ipc.OnboardingRequired{CapsuleID: "weather",
		Fields: []ipc.OnboardingField{{Key: "API_KEY", Prompt: "<b>Your key</b>", FieldType: ipc.FieldType{Kind: ipc.FieldSecret}}}}))
	webviewtest.WaitTrue(t, ctx, "the pending value", `[...document.querySelectorAll('#turns .turn.pending .prompt')].some(e => e.textContent === 'weather needs API_KEY: <b>Your key</b>')`)
	src.turns.ch <- deliveryOf(envelope(t, ipc.AgentToolFinishedTopic, "default", time.Now().Add(time.Second), ipc.AgentToolFinished{SessionID: "s1", TurnID: "t2", CallID: "c2", Name: "replace_in_file"}))
	webviewtest.WaitTrue(t, ctx, "the pending value settled", `document.querySelectorAll('#turns .turn.pending').length === 0`)

	// Selecting the hostile capsule shows its grants as text.
	webviewtest.Do(t, ctx, "select the first capsule", chromedp.Click(chromedp.CSS(`#graph-nodes .node circle`)))
	webviewtest.WaitTrue(t, ctx, "the details", `document.getElementById('details-id') !== null`)

	for what, cond := range map[string]string{
		"the capsule name as text in the graph":                `[...document.querySelectorAll('#graph-nodes text')].some(e => e.textContent === ` + js(htmlCapsule) + `)`,
		"the capsule name as text in the details":              `document.getElementById('details-id').textContent === ` + js(htmlCapsule),
		"the grant as text":                                    `[...document.querySelectorAll('#details li')].some(e => e.textContent === ` + js(htmlGrant) + `)`,
		"no null in the details of a capsule without an error": `!/null/.test(document.getElementById('details').textContent)`,
		"the topic as text":                                    `[...document.querySelectorAll('#topics td')].some(e => e.textContent === ` + js(htmlTopic) + `)`,
		"the drop reason as text":                              `[...document.querySelectorAll('#drops td')].some(e => e.textContent === ` + js("denied: "+htmlTopic) + `)`,
		"the prompt as text":                                   `[...document.querySelectorAll('#turns .prompt')].some(e => e.textContent === '<i>read</i> it')`,
		"no element made from server text":                     `document.querySelectorAll('img, b, i, svg svg, script:not([src]), main script').length === 0`,
		"no script run from server text":                       `document.body.dataset.pwned === undefined`,
		"the token gone from the address bar":                  `location.search === '' && !location.href.includes(` + js(srv.Token()) + `)`,
		"the cookie invisible to scripts":                      `document.cookie === ''`,
		"the answer's heading, bold and list": `document.querySelector('#turns .answer .md-h').textContent === 'Result' &&
			document.querySelector('#turns .answer strong').textContent === 'bold' &&
			[...document.querySelectorAll('#turns .answer li')].map(e => e.textContent).join('|') === 'one|two'`,
		"the answer's code block as text, highlighted": `document.querySelector('#turns .answer pre code').textContent === 'x := "<b>1</b>"\n' &&
			document.querySelector('#turns .answer pre .hl-str').textContent === '"<b>1</b>"'`,
		"the answer's table aligned": `[...document.querySelectorAll('#turns .answer th')].map(e => e.textContent).join('|') === 'File|Lines' &&
			document.querySelector('#turns .answer td.align-right').textContent === '120'`,
		"only the https link is a link":      `[...document.querySelectorAll('#turns .answer a')].map(a => a.href + ' ' + a.rel).join('|') === 'https://example.com/docs noopener noreferrer nofollow'`,
		"the javascript: link is its text":   `[...document.querySelectorAll('#turns .answer .md-link')].map(e => e.textContent).join('|') === 'click|me too'`,
		"the answer's raw HTML as text":      `[...document.querySelectorAll('#turns .answer')].some(e => e.textContent.includes('<img src=x onerror="document.body.dataset.pwned=1">'))`,
		"the kernel's notice shown, as text": `!document.getElementById('notice').hidden && document.getElementById('notice').textContent === 'sandbox: OFF <b>unconfined</b>'`,
	} {
		if !webviewtest.Eval[bool](t, ctx, cond) {
			t.Errorf("%s: false: %s", what, cond)
		}
	}
	webviewtest.Screenshot(t, ctx, "webview-synthetic-200-capsules.png")
	if t.Failed() {
		html := webviewtest.Eval[string](t, ctx, `document.body.outerHTML`)
		t.Logf("page:\n%s", html[:min(len(html), 4000)])
	}
}
