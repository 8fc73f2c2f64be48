package wasm

import (
	"context"
	"testing"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
)

// TestAccessorsOutliveTheirCall: what a guest's Call accessors return
// stays as it was after the host has written the next call's record into
// the same buffer (issue 14.8): the sdk copies out of the record instead of
// aliasing it. The second call has fields of the same lengths, so an
// aliasing string would read the second call's bytes.
func TestAccessorsOutliveTheirCall(t *testing.T) {
	f := loadHostile(t, Options{})
	ctx := context.Background()
	call := func(handler, source, payload string) hostapi.Verdict {
		t.Helper()
		v, err := f.eng.Invoke(ctx, hostapi.Invocation{
			Handler: handler, Pattern: "hostile.v1." + handler, Topic: "hostile.v1." + handler,
			SourceID: source, Principal: ipc.DefaultPrincipal, Payload: []byte(payload),
		})
		if err != nil {
			t.Fatalf("%s: %v", handler, err)
		}
		return v
	}
	call("keep", "source-1", `{"first":"call"}`)
	v := call("kept", "source-2", `{"other":"call"}`)
	want := `{"topic":"hostile.v1.keep","source":"source-1","principal":"` + ipc.DefaultPrincipal + `","payload":{"first":"call"}}`
	if string(v.Payload) != want {
		t.Fatalf("kept = %s\nwant   %s", v.Payload, want)
	}
}
