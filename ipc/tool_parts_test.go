package ipc

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

var png1x1 = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")

// A result with parts: the hand-written codec writes what the generic one
// does, the parts come back whole, and a result without parts is
// unchanged on the wire (old capsules and readers see what they did).
func TestToolPartsTravelAdditively(t *testing.T) {
	parts := []ToolPart{
		{Type: ToolPartText, Text: "Multiple <content> types"},
		{Type: ToolPartImage, MimeType: "image/png", Data: png1x1},
		{Type: ToolPartResource, URI: "test://r", MimeType: "application/json", Text: `{"a":1}`},
	}
	res := ToolExecuteResult{CallID: "c1", Result: ToolCallResult{CallID: "c1", Content: ToolPartsText(parts), Parts: parts}}
	got, _ := res.MarshalJSON()
	want, _ := genericResultJSON(res)
	if !bytes.Equal(got, want) {
		t.Fatalf("got %s\nwant %s", got, want)
	}
	if !bytes.Contains(got, []byte(`"data":"iVBORw0KGgoAAAANSUhEUg=="`)) {
		t.Fatalf("image data not base64 on the wire: %s", got)
	}
	var back ToolExecuteResult
	if err := json.Unmarshal(got, &back); err != nil || !reflect.DeepEqual(back, res) {
		t.Fatalf("decoded %+v (%v), want %+v", back, err, res)
	}
	if _, _, ok := ToolResultCallIDs(got); ok {
		t.Fatal("ToolResultCallIDs took a result with parts for the plain form")
	}
	plain, _ := ToolExecuteResult{CallID: "c", Result: ToolCallResult{CallID: "c", Content: "x"}}.MarshalJSON()
	if string(plain) != `{"type":"tool_execute_result","call_id":"c","result":{"call_id":"c","content":"x","is_error":false}}` {
		t.Fatalf("a result without parts changed on the wire: %s", plain)
	}
	if text := ToolPartsText(parts); !strings.Contains(text, "[image image/png, 16 bytes]") || !strings.Contains(text, `{"a":1}`) {
		t.Fatalf("placeholders: %q", text)
	}
}

// Escape attempts and bad input: each refused, naming what is wrong.
func TestValidateToolPartsRefuses(t *testing.T) {
	big := make([]byte, 10<<20*3/4) // 10 MiB of base64
	many := make([]ToolPart, MaxParts+1)
	for i := range many {
		many[i] = ToolPart{Type: ToolPartText, Text: "x"}
	}
	for _, c := range []struct {
		name  string
		parts []ToolPart
		want  string
	}{
		{"10 MiB of base64", []ToolPart{{Type: ToolPartImage, MimeType: "image/png", Data: big}}, "exceeds"},
		{"data split over parts", []ToolPart{{Type: ToolPartImage, MimeType: "image/png", Data: big[:MaxPartsData]}, {Type: ToolPartAudio, MimeType: "audio/wav", Data: []byte{1}}}, "exceeds"},
		{"too many parts", many, "at most"},
		{"unknown type", []ToolPart{{Type: "script", Text: "x"}}, "unknown content part type"},
		{"image without data", []ToolPart{{Type: ToolPartImage, MimeType: "image/png"}}, "needs data"},
		{"image as text/html", []ToolPart{{Type: ToolPartImage, MimeType: "text/html", Data: []byte("<script>")}}, "image/* MIME type"},
		{"audio without mime", []ToolPart{{Type: ToolPartAudio, Data: []byte{1}}}, "audio/* MIME type"},
		{"mime with a newline", []ToolPart{{Type: ToolPartImage, MimeType: "image/png\r\nX-Evil: 1", Data: []byte{1}}}, "type/subtype"},
		{"mime of two slashes", []ToolPart{{Type: ToolPartImage, MimeType: "image//png", Data: []byte{1}}}, "type/subtype"},
		{"long mime", []ToolPart{{Type: ToolPartImage, MimeType: "image/" + strings.Repeat("p", 200), Data: []byte{1}}}, "type/subtype"},
		{"resource without uri", []ToolPart{{Type: ToolPartResource, Text: "x"}}, "needs a URI"},
		{"resource text and data", []ToolPart{{Type: ToolPartResource, URI: "a:b", Text: "x", Data: []byte{1}}}, "not both"},
		{"long uri", []ToolPart{{Type: ToolPartResource, URI: strings.Repeat("u", 3000), Text: "x"}}, "URI is"},
		{"text with data", []ToolPart{{Type: ToolPartText, Text: "x", Data: []byte{1}}}, "only text"},
	} {
		err := ValidateToolParts(c.parts)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want an error saying %q", c.name, err, c.want)
		}
	}
	ok := []ToolPart{
		{Type: ToolPartText, Text: "t"},
		{Type: ToolPartImage, MimeType: "image/png", Data: png1x1},
		{Type: ToolPartAudio, MimeType: "audio/wav", Data: []byte("RIFF")},
		{Type: ToolPartResource, URI: "test://x", MimeType: "text/plain", Text: "t"},
		{Type: ToolPartResource, URI: "test://y", MimeType: "application/octet-stream", Data: []byte{0}},
	}
	if err := ValidateToolParts(ok); err != nil {
		t.Fatalf("valid parts refused: %v", err)
	}
}

// FuzzToolParts: whatever a result's parts decode from, a result whose
// parts validate encodes by the hand-written codec as the generic one
// does and decodes back to itself.
func FuzzToolParts(f *testing.F) {
	f.Add(`[{"type":"image","mime_type":"image/png","data":"iVBORw=="}]`)
	f.Add(`[{"type":"resource","uri":"test://x","text":"a"},{"type":"text","text":"b"}]`)
	f.Add(`[{"type":"audio","mime_type":"audio/wav","data":"!!"}]`)
	f.Fuzz(func(t *testing.T, parts string) {
		var r ToolCallResult
		in := `{"call_id":"c","content":"x","is_error":false,"parts":` + parts + `}`
		if err := json.Unmarshal([]byte(in), &r); err != nil || ValidateToolParts(r.Parts) != nil {
			return
		}
		res := ToolExecuteResult{CallID: "c", Result: r}
		got, _ := res.MarshalJSON()
		want, _ := genericResultJSON(res)
		if !bytes.Equal(got, want) {
			t.Fatalf("got %s, want %s", got, want)
		}
		var back ToolExecuteResult
		if err := back.UnmarshalJSON(got); err != nil {
			t.Fatalf("decode %s: %v", got, err)
		}
		if len(r.Parts) == 0 {
			r.Parts = nil
		}
		if !reflect.DeepEqual(back.Result, r) && !(len(back.Result.Parts) == 0 && len(r.Parts) == 0) {
			t.Fatalf("decoded %+v, want %+v", back.Result, r)
		}
	})
}
