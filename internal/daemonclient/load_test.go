package daemonclient_test

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/astrid-go/astrid/capsules/uplink"
	"github.com/astrid-go/astrid/internal/daemonclient"
	"github.com/astrid-go/astrid/internal/uplinkwire"
)

// The load op reaches the daemon's loader only from the owner's uid, with
// the capsule named; its answer is the payload. Another uid, no loader, a
// missing or overlong name are refused, each with its code.
func TestLoadOp(t *testing.T) {
	me := os.Getuid()
	var mu sync.Mutex
	var asked []string
	load := func(id string, owner bool) (json.RawMessage, error) {
		mu.Lock()
		asked = append(asked, id)
		mu.Unlock()
		if id == "broken" {
			return nil, errors.New("it does not load")
		}
		return json.Marshal(map[string]any{"id": id, "owner": owner})
	}
	d := boot(t, uplink.Settings{OwnerUID: me, Load: load})
	c := d.dial(t)
	var got struct {
		ID    string
		Owner bool
	}
	if err := c.Load("greeter", time.Minute, &got); err != nil || got.ID != "greeter" || !got.Owner {
		t.Fatalf("load by the owner: %+v, %v", got, err)
	}
	code := func(err error) string {
		var de *daemonclient.Error
		if errors.As(err, &de) {
			return de.Code
		}
		return ""
	}
	if err := c.Load("broken", time.Minute, new(any)); code(err) != uplinkwire.CodeFailed || !strings.Contains(err.Error(), "it does not load") {
		t.Fatalf("a failing load: %v", err)
	}
	for _, id := range []string{"", strings.Repeat("x", 129)} {
		if err := c.Load(id, time.Minute, new(any)); code(err) != uplinkwire.CodeBadFrame {
			t.Fatalf("load %d bytes: %v", len(id), err)
		}
	}
	other := boot(t, uplink.Settings{OwnerUID: me + 1, Principals: map[int]string{me: "alice"}, Load: load})
	if err := other.dial(t).Load("greeter", time.Minute, new(any)); code(err) != uplinkwire.CodeNotAllowed {
		t.Fatalf("load by another uid: %v", err)
	}
	none := boot(t, owner())
	if err := none.dial(t).Load("greeter", time.Minute, new(any)); code(err) != uplinkwire.CodeFailed {
		t.Fatalf("load without a loader: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 2 {
		t.Fatalf("the loader was asked %v, want greeter and broken only", asked)
	}
}
