package promptbuilder_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/astrid-go/astrid/capsules/fs"
	"github.com/astrid-go/astrid/sdk"
)

type sdkCapsule = sdk.Capsule

// muteCapsule intercepts describe and never answers.
func muteCapsule() *sdk.Capsule {
	c := sdk.New("never answers")
	c.Handle("tool.v1.request.describe", "describe_nothing", func(*sdk.Call) error { return nil })
	return c
}

func timeNowMs() int64 { return time.Now().UnixMilli() }

func writeFile(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

func fsManifest() []byte { return fs.Manifest }

func fsNew() *sdk.Capsule { return fs.New() }
