package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/internal/capsule"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/grants"
	"github.com/astrid-go/astrid/internal/host"
	"github.com/astrid-go/astrid/internal/store"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/manifest"
	"github.com/astrid-go/astrid/sdk"
)

const waitLimit = 30 * time.Second

// fixture is a dispatcher, a capsules directory and a runtime over them,
// with an observer capsule that may read kernel signals and static answers.
type fixture struct {
	t        testing.TB
	d        *dispatch.Dispatcher
	rt       *Runtime
	capsules string
	observer dispatch.Caller
	// book is the operator's approval records: install approves what it
	// writes, as `astrid capsule install` does; edit does not.
	book *grants.Book
}

type silentTarget struct{}

func (silentTarget) Intercept(context.Context, dispatch.Invocation) (dispatch.Verdict, error) {
	return dispatch.Verdict{}, dispatch.ErrNotSupported
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func newFixture(t testing.TB, builtins []Builtin, engines Engines) *fixture {
	t.Helper()
	log := quietLogger()
	b := bus.New(bus.Options{Logger: log})
	d := dispatch.New(b, dispatch.Options{Logger: log})
	home := t.TempDir()
	f := &fixture{t: t, d: d, capsules: filepath.Join(home, "capsules"), observer: dispatch.Caller{Capsule: "observer", Principal: ipc.DefaultPrincipal}}
	if err := os.MkdirAll(f.capsules, 0o700); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(filepath.Join(home, "state.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.book = grants.NewBook(st)
	if err := d.Register(dispatch.CapsuleACL{
		ID:        "observer",
		Publish:   []string{"static.v1.request.*"},
		Subscribe: []string{ipc.CapsulesLoadedTopic, "static.v1.response.*"},
	}, silentTarget{}); err != nil {
		t.Fatal(err)
	}
	f.rt = New(Options{
		Dispatcher:  d,
		Registry:    capsule.NewRegistry(),
		Host:        host.Deps{Dispatcher: d, Logger: log, Workspace: t.TempDir(), HomesDir: filepath.Join(home, "home")},
		BuiltinDir:  filepath.Join(home, "builtin"),
		CapsulesDir: f.capsules,
		Builtins:    builtins,
		Engines:     engines,
		Approvals:   f.book,
		Reserved:    []string{"kernel", "observer"},
		Logger:      log,
	})
	t.Cleanup(func() {
		f.rt.Close(context.Background())
		d.Close()
		b.Close()
		_ = st.Close()
	})
	return f
}

// install writes a capsule directory under the capsules directory and, as
// an operator confirming `astrid capsule install` would, approves the
// grants of the Capsule.toml it wrote (when it wrote one that parses).
func (f *fixture) install(dir string, files map[string]string) string {
	f.t.Helper()
	// Approved before its files are written, as the installer records the
	// approval before it moves the capsule in: a watcher that sees the
	// files finds the approval already there.
	if text, ok := files[manifest.FileName]; ok {
		if m, diags := manifest.Parse([]byte(text), manifest.FileName, filepath.Join(f.capsules, dir)); m != nil && diags.Err(false) == nil {
			if err := f.book.Approve(m); err != nil {
				f.t.Fatal(err)
			}
		}
	}
	return f.edit(dir, files)
}

// edit writes files into a capsule directory, as someone editing it on
// disk would: nothing is approved.
func (f *fixture) edit(dir string, files map[string]string) string {
	f.t.Helper()
	root := filepath.Join(f.capsules, dir)
	for name, text := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			f.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			f.t.Fatal(err)
		}
	}
	return root
}

// subscribe opens a route for the observer.
func (f *fixture) subscribe(pattern string) *bus.Route {
	f.t.Helper()
	r, err := f.d.Subscribe(f.observer, pattern, false)
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(r.Close)
	return r
}

// nextLoaded waits for the next capsules_loaded event on r.
func nextLoaded(t *testing.T, r *bus.Route) LoadedEvent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	d, err := r.Recv(ctx)
	if err != nil {
		t.Fatalf("no %s: %v", ipc.CapsulesLoadedTopic, err)
	}
	if d.Envelope.SourceID != ipc.KernelSourceID {
		t.Errorf("%s from %q, want the kernel", ipc.CapsulesLoadedTopic, d.Envelope.SourceID)
	}
	var ev LoadedEvent
	if err := json.Unmarshal(ipc.GuestBytes(d.Envelope.Payload), &ev); err != nil {
		t.Fatalf("capsules_loaded payload %s: %v", d.Envelope.Payload, err)
	}
	return ev
}

func (ev LoadedEvent) state(id string) string {
	for _, c := range ev.Capsules {
		if c.ID == id {
			return c.State
		}
	}
	return ""
}

// askContext publishes a static context request and returns capsule id's
// answer.
func (f *fixture) askContext(id string) string {
	f.t.Helper()
	r := f.subscribe("static.v1.response.context." + id)
	defer r.Close()
	if _, err := f.d.Publish(f.observer, "static.v1.request.context", json.RawMessage(`{"type":"custom","data":{}}`)); err != nil {
		f.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	d, err := r.Recv(ctx)
	if err != nil {
		f.t.Fatalf("no context answer from %s: %v", id, err)
	}
	return string(ipc.GuestBytes(d.Envelope.Payload))
}

func (f *fixture) status(id string) Status {
	f.t.Helper()
	for _, s := range f.rt.List() {
		if s.ID == id {
			return s
		}
	}
	f.t.Fatalf("capsule %s is not listed: %+v", id, f.rt.List())
	return Status{}
}

// manifestText builds a Capsule.toml: name, then extra TOML.
func manifestText(name string, extra ...string) string {
	return fmt.Sprintf("[package]\nname = %q\nversion = \"0.1.0\"\n", name) + strings.Join(extra, "\n") + "\n"
}

func contextCapsule(name, text string, extra ...string) map[string]string {
	return map[string]string{
		"Capsule.toml": manifestText(name, append([]string{"[[context_file]]\nname = \"notes\"\nfile = \"notes.md\""}, extra...)...),
		"notes.md":     text,
	}
}

// echoBuiltin is a built-in providing the tool "echo".
func echoBuiltin(name string) Builtin {
	text := manifestText(name,
		"[subscribe]",
		`"tool.v1.execute.echo" = { wit = "opaque", handler = "tool_execute_echo" }`,
		"[publish]",
		`"tool.v1.execute.echo.result" = "opaque"`)
	return Builtin{
		Manifest: []byte(text),
		New: func() *sdk.Capsule {
			c := sdk.New("echo")
			sdk.Tool(c, "echo", "says it back", func(_ *sdk.Call, a struct {
				Text string `json:"text"`
			}) (string, error) {
				return a.Text, nil
			})
			return c
		},
	}
}

func parseManifest(t *testing.T, text string) *manifest.Manifest {
	t.Helper()
	m, diags := manifest.Parse([]byte(text), "Capsule.toml", "")
	if err := diags.Err(false); err != nil {
		t.Fatal(err)
	}
	return m
}
