package registry_test

import (
	"slices"
	"testing"

	"github.com/astrid-go/astrid/capsules/registry"
	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
)

// loadedHost records the KV keys a handler deletes; every other host
// method panics (the nil embedded interface), so an unexpected effect
// fails the test.
type loadedHost struct {
	hostapi.Host
	deleted []string
	logs    []string
}

func (h *loadedHost) KVDelete(key string) error { h.deleted = append(h.deleted, key); return nil }
func (h *loadedHost) Log(_ hostapi.LogLevel, msg string) {
	h.logs = append(h.logs, msg)
}

// astrid.v1.capsules_loaded from the kernel drops the cached list (and
// nothing else: never the choice); from anyone else it is ignored.
func TestCapsulesLoadedDropsTheCache(t *testing.T) {
	for _, tc := range []struct {
		source string
		drops  bool
	}{{ipc.KernelSourceID, true}, {"test-impostor", false}} {
		h := &loadedHost{}
		_, err := registry.New().Invoke(h, hostapi.Invocation{Handler: "handle_capsules_loaded", Topic: ipc.CapsulesLoadedTopic,
			SourceID: tc.source, Principal: ipc.DefaultPrincipal, Payload: []byte(`{"capsules": []}`)})
		if err != nil {
			t.Fatalf("%s: %v", tc.source, err)
		}
		want := []string(nil)
		if tc.drops {
			want = []string{"~registry.providers"}
		}
		if !slices.Equal(h.deleted, want) {
			t.Errorf("from %s: deleted %v, want %v", tc.source, h.deleted, want)
		}
		if !tc.drops && len(h.logs) == 0 {
			t.Errorf("from %s: ignored without a word", tc.source)
		}
	}
}
