package webview

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/internal/mdparse"
	"github.com/astrid-go/astrid/ipc"
)

// An answer's markdown becomes the page's nodes: structure kept, markup
// never (raw HTML is text), and a link keeps only an absolute http, https
// or mailto destination, whatever its spelling.
func TestAnswerDocIsSafe(t *testing.T) {
	p := mdparse.New()
	for _, tc := range []struct{ name, src, want string }{
		{"heading and emphasis", "# Hi\n\nSome **bold** and *it*.", `[{"k":"h","level":1,"c":[{"k":"text","t":"Hi"}]},{"k":"p","c":[{"k":"text","t":"Some "},{"k":"strong","c":[{"k":"text","t":"bold"}]},{"k":"text","t":" and "},{"k":"em","c":[{"k":"text","t":"it"}]},{"k":"text","t":"."}]}]`},
		{"code", "`a<b>`\n\n```go\nx := 1\n```", `[{"k":"p","c":[{"k":"code","t":"a\u003cb\u003e"}]},{"k":"pre","lang":"go","c":[{"k":"text","t":"x := "},{"k":"span","t":"1","class":"num"},{"k":"text","t":"\n"}]}]`},
		{"table", "| a | b |\n|:-|-:|\n| 1 | 2 |", `[{"k":"table","c":[{"k":"tr","c":[{"k":"th","align":"left","c":[{"k":"text","t":"a"}]},{"k":"th","align":"right","c":[{"k":"text","t":"b"}]}]},{"k":"tr","c":[{"k":"td","align":"left","c":[{"k":"text","t":"1"}]},{"k":"td","align":"right","c":[{"k":"text","t":"2"}]}]}]}]`},
		{"https link", "[x](https://example.com/a?b=c)", `[{"k":"p","c":[{"k":"a","href":"https://example.com/a?b=c","c":[{"k":"text","t":"x"}]}]}]`},
		{"javascript link", "[x](javascript:alert(1))", `[{"k":"p","c":[{"k":"a","c":[{"k":"text","t":"x"}]}]}]`},
		{"javascript, upper case and spaced", "[x]( JAVASCRIPT:alert(1) )", `[{"k":"p","c":[{"k":"a","c":[{"k":"text","t":"x"}]}]}]`},
		{"javascript, entity-encoded", "[x](&#106;avascript:alert(1))", `[{"k":"p","c":[{"k":"a","c":[{"k":"text","t":"x"}]}]}]`},
		{"data link", "[x](data:text/html;base64,PHNjcmlwdD4=)", `[{"k":"p","c":[{"k":"a","c":[{"k":"text","t":"x"}]}]}]`},
		{"vbscript link", "<vbscript:msgbox(1)>", `[{"k":"p","c":[{"k":"a","c":[{"k":"text","t":"vbscript:msgbox(1)"}]}]}]`},
		{"relative link", "[x](/admin?token=1)", `[{"k":"p","c":[{"k":"a","c":[{"k":"text","t":"x"}]}]}]`},
		{"http without a host (a path on the page's origin)", "[x](http:api/state)", `[{"k":"p","c":[{"k":"a","c":[{"k":"text","t":"x"}]}]}]`},
		{"protocol-relative link", "[x](//evil.example/)", `[{"k":"p","c":[{"k":"a","c":[{"k":"text","t":"x"}]}]}]`},
		{"mail autolink", "<a@b.example>", `[{"k":"p","c":[{"k":"a","href":"mailto:a@b.example","c":[{"k":"text","t":"a@b.example"}]}]}]`},
		{"raw html block", "<script>alert(1)</script>", `[{"k":"p","c":[{"k":"text","t":"\u003cscript\u003ealert(1)\u003c/script\u003e"}]}]`},
		{"inline html", "a <img src=x onerror=alert(1)> b", `[{"k":"p","c":[{"k":"text","t":"a "},{"k":"text","t":"\u003cimg src=x onerror=alert(1)\u003e"},{"k":"text","t":" b"}]}]`},
		{"image loads nothing", "![alt](https://tracker.example/p.png)", `[{"k":"p","c":[{"k":"text","t":"[image: alt]"}]}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, _ := json.Marshal(answerDoc(p, tc.src, 0))
			if string(b) != tc.want {
				t.Errorf("nodes\n%s\nwant\n%s", b, tc.want)
			}
		})
	}
}

// Deep nesting and a huge answer stay bounded: nesting past maxMDDepth is
// text, and past maxAnswerBytes the answer is cut, saying so.
func TestAnswerDocIsBounded(t *testing.T) {
	p := mdparse.New()
	deep := answerDoc(p, strings.Repeat(">", 500)+" deep", 0)
	depth := 0
	for n := deep; len(n) > 0; n = n[0].Children {
		depth++
	}
	if depth > maxMDDepth+2 {
		t.Errorf("nesting %d deep, bound %d", depth, maxMDDepth)
	}
	b, _ := json.Marshal(deep)
	if !strings.Contains(string(b), "deep") {
		t.Errorf("the deep text is lost: %s", b)
	}
	huge := answerDoc(p, strings.Repeat("word ", 100_000), 0)
	b, _ = json.Marshal(huge)
	if len(b) > 2*maxAnswerBytes || !strings.Contains(string(b), "is not kept by the view") {
		t.Errorf("a 500 KB answer kept as %d bytes (ends %q)", len(b), b[max(len(b)-120, 0):])
	}
}

// What answers add to each tick the page is sent (once a second while
// someone watches): the turns of a full recent list (50), each ended with
// a markdown answer at the kept bound, encoded as a tick encodes them
// (the answers are fetched once each, so only their ids are in it).
func BenchmarkTurnsWithAnswersEncoded(b *testing.B) {
	r := newRecorder(50)
	var md strings.Builder
	for md.Len() < maxAnswerBytes {
		md.WriteString("## Step\n\nSome **bold** text with `code` and a [link](https://example.com).\n\n- one\n- two\n\n```go\nfunc f() int { return 42 }\n```\n\n| a | b |\n|---|--:|\n| x | 1 |\n\n")
	}
	answer := md.String()
	for i := range 50 {
		s := "s" + strconv.Itoa(i)
		ctx, _ := json.Marshal(ipc.PromptContext{TurnID: "t"})
		in, _ := ipc.EncodePayload(ipc.UserInput{Text: "q", SessionID: s, Context: ctx})
		r.observe(&ipc.Envelope{Topic: ipc.UserPromptTopic, Principal: "p", Payload: in})
		out, _ := ipc.EncodePayload(ipc.AgentResponse{SessionID: s, TurnID: "t", IsFinal: true, Outcome: ipc.OutcomeAnswer, Text: answer})
		r.observe(&ipc.Envelope{Topic: ipc.AgentResponseTopic, Principal: "p", Payload: out})
	}
	if got := len(r.snapshot().Recent); got != 50 {
		b.Fatalf("%d turns recorded", got)
	}
	size := 0
	for b.Loop() {
		msg, err := encodeTick(Tick{Turns: r.snapshot()})
		if err != nil {
			b.Fatal(err)
		}
		size = len(msg)
	}
	b.ReportMetric(float64(size), "bytes/tick")
}

// An ended turn's answer is kept under its id while the turn is in the
// recent list, and forgotten with it; a turn without text has none.
func TestRecorderKeepsAnswersOfRecentTurns(t *testing.T) {
	r := newRecorder(2)
	end := func(session, text string) {
		ctx, _ := json.Marshal(ipc.PromptContext{TurnID: "t"})
		in, _ := ipc.EncodePayload(ipc.UserInput{Text: "q", SessionID: session, Context: ctx})
		r.observe(&ipc.Envelope{Topic: ipc.UserPromptTopic, Principal: "p", Payload: in})
		out, _ := ipc.EncodePayload(ipc.AgentResponse{SessionID: session, TurnID: "t", IsFinal: true, Outcome: ipc.OutcomeAnswer, Text: text})
		r.observe(&ipc.Envelope{Topic: ipc.AgentResponseTopic, Principal: "p", Payload: out})
	}
	end("s1", "**first**")
	end("s2", "")
	first := r.snapshot().Recent[1]
	if first.AnswerID == "" || r.snapshot().Recent[0].AnswerID != "" {
		t.Fatalf("answer ids %+v", r.snapshot().Recent)
	}
	if enc, ok := r.answer(first.AnswerID); !ok || string(enc) != `[{"k":"p","c":[{"k":"strong","c":[{"k":"text","t":"first"}]}]}]` {
		t.Fatalf("answer %s: %q %v", first.AnswerID, enc, ok)
	}
	end("s3", "third")
	end("s4", "fourth")
	if _, ok := r.answer(first.AnswerID); ok || len(r.answers) != 2 {
		t.Fatalf("the answer of a turn gone from the recent list is kept (%d kept)", len(r.answers))
	}
}

// The cost of one answer at the bound (16 KiB of markdown) parsed into
// nodes and encoded: paid once, when the page first asks for it.
func BenchmarkAnswerDoc(b *testing.B) {
	var md strings.Builder
	for md.Len() < maxAnswerBytes {
		md.WriteString("## Step\n\nSome **bold** text with `code` and a [link](https://example.com).\n\n- one\n- two\n\n```go\nfunc f() int { return 42 }\n```\n\n| a | b |\n|---|--:|\n| x | 1 |\n\n")
	}
	p := mdparse.New()
	for b.Loop() {
		if _, err := json.Marshal(answerDoc(p, md.String(), 0)); err != nil {
			b.Fatal(err)
		}
	}
}

// Whatever the model writes, the page is given only the fixed kinds, a
// link only to an absolute http, https or mailto address, and nesting
// within the bound.
func FuzzAnswerDoc(f *testing.F) {
	f.Add("[x](javascript:alert(1)) <a href=x>y</a> ![i](https://t.example/p.png)")
	f.Add("> > - [a](HTTPS://example.com)\n\n| a |\n|---|\n| <b>c</b> |\n\n```js\nlet s = '\\''\n```")
	f.Add("<mailto:a@b.example> <http://x.example> [e](&#x6A;avascript:1)")
	kinds := map[string]bool{}
	for _, k := range strings.Fields("p h ul ol li quote pre hr table tr th td text em strong code a br span") {
		kinds[k] = true
	}
	p := mdparse.New()
	f.Fuzz(func(t *testing.T, src string) {
		var walk func(ns []MDNode, depth int)
		walk = func(ns []MDNode, depth int) {
			if depth > maxMDDepth+2 {
				t.Fatalf("nesting %d deep", depth)
			}
			for _, n := range ns {
				if !kinds[n.Kind] {
					t.Fatalf("kind %q", n.Kind)
				}
				if h := strings.ToLower(n.Href); h != "" && !strings.HasPrefix(h, "http://") && !strings.HasPrefix(h, "https://") && !strings.HasPrefix(h, "mailto:") ||
					(strings.HasPrefix(h, "http://") || strings.HasPrefix(h, "https://")) && strings.HasPrefix(strings.SplitN(h, "//", 2)[1], "/") {
					t.Fatalf("link to %q", n.Href)
				}
				walk(n.Children, depth+1)
			}
		}
		walk(answerDoc(p, src, 0), 0)
	})
}
