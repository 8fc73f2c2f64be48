package static

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/internal/capsule"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/host"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/manifest"
)

const docsManifest = `
[package]
name = "docs"
version = "0.1.0"

[[context_file]]
name = "style"
file = "context/style.md"

[[skill]]
name = "review"
description = "Review a change"
file = "skills/review/SKILL.md"

[[command]]
name = "deploy"
description = "Deploy to production"
file = "commands/deploy.toml"

[[command]]
name = "status"
`

// writeCapsule lays out a capsule directory from a map of relative paths
// to contents and loads its manifest.
func writeCapsule(t *testing.T, files map[string]string) *manifest.Manifest {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m, diags := manifest.Load(dir)
	if err := diags.Err(false); err != nil {
		t.Fatalf("manifest: %v", err)
	}
	return m
}

func docsFiles() map[string]string {
	return map[string]string{
		"Capsule.toml":           docsManifest,
		"context/style.md":       "Write short sentences.\n",
		"skills/review/SKILL.md": "# Review\nRead the diff first.\n",
		"commands/deploy.toml":   "prompt = \"Deploy {{env}}\"\n[args]\nenv = { required = true }\n",
	}
}

// harness is a bus and dispatcher with the capsule under test loaded as a
// Composite of its static engine, and a "reader" capsule that asks.
type harness struct {
	d      *dispatch.Dispatcher
	engine *Engine
	comp   *capsule.Composite
	reader dispatch.Caller
}

type noTarget struct{}

func (noTarget) Intercept(context.Context, dispatch.Invocation) (dispatch.Verdict, error) {
	return dispatch.Verdict{}, dispatch.ErrNotSupported
}

func newHarness(t *testing.T, m *manifest.Manifest) *harness {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	b := bus.New(bus.Options{Logger: log})
	d := dispatch.New(b, dispatch.Options{Logger: log})
	t.Cleanup(func() { d.Close(); b.Close() })
	h, err := host.NewCapsule(host.Deps{Dispatcher: d, Logger: log, Workspace: t.TempDir(), HomesDir: t.TempDir()}, m, m.Dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	e := New(m, h)
	comp := capsule.NewComposite(m, time.Minute, log, e)
	if err := comp.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := comp.Surface()
	acl := dispatch.CapsuleACL{ID: m.ID(), Publish: s.Publish, Subscribe: s.Subscribe}
	for _, i := range s.Interceptors {
		acl.Interceptors = append(acl.Interceptors, dispatch.Interceptor{Pattern: i.Pattern, Handler: i.Handler, Priority: i.Priority})
	}
	if err := d.Register(acl, comp); err != nil {
		t.Fatal(err)
	}
	reader := dispatch.CapsuleACL{ID: "reader", Publish: []string{"static.v1.request.*"}, Subscribe: []string{"static.v1.response.*"}}
	if err := d.Register(reader, noTarget{}); err != nil {
		t.Fatal(err)
	}
	return &harness{d: d, engine: e, comp: comp, reader: dispatch.Caller{Capsule: "reader", Principal: "alice"}}
}

// ask publishes a static request and returns the data of the first answer
// on responsePattern.
func (h *harness) ask(t *testing.T, topic, responsePattern string, data string) (*ipc.Envelope, json.RawMessage) {
	t.Helper()
	r, err := h.d.Subscribe(h.reader, responsePattern, false)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	payload, err := ipc.EncodePayload(ipc.Custom{Data: json.RawMessage(data)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.d.Publish(h.reader, topic, payload); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	del, err := r.Recv(ctx)
	if err != nil {
		t.Fatalf("no answer on %s: %v", responsePattern, err)
	}
	return del.Envelope, ipc.GuestBytes(del.Envelope.Payload)
}

func TestServesOverTheBus(t *testing.T) {
	h := newHarness(t, writeCapsule(t, docsFiles()))
	cases := []struct {
		name     string
		request  string
		response string
		decode   func(json.RawMessage) (any, error)
		want     any
	}{
		{
			name: "context files", request: ContextRequestTopic, response: ContextResponseTopic("docs"),
			decode: decodeAs[ContextResponse],
			want: ContextResponse{Capsule: "docs", RequestID: "r1", ContextFiles: []ContextFile{
				{Name: "style", File: "context/style.md", Content: "Write short sentences.\n"},
			}},
		},
		{
			name: "skills", request: SkillsRequestTopic, response: SkillsResponseTopic("docs"),
			decode: decodeAs[SkillsResponse],
			want: SkillsResponse{Capsule: "docs", RequestID: "r1", Skills: []Skill{
				{Name: "review", Description: "Review a change", File: "skills/review/SKILL.md", Content: "# Review\nRead the diff first.\n"},
			}},
		},
		{
			name: "commands", request: CommandsRequestTopic, response: CommandsResponseTopic("docs"),
			decode: decodeAs[CommandsResponse],
			want: CommandsResponse{Capsule: "docs", RequestID: "r1", Commands: []Command{
				{Name: "deploy", Description: "Deploy to production", Kind: "slash", File: "commands/deploy.toml",
					Definition: json.RawMessage(`{"args":{"env":{"required":true}},"prompt":"Deploy {{env}}"}`)},
				{Name: "status", Kind: "slash"},
			}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env, data := h.ask(t, tc.request, tc.response, `{"request_id":"r1"}`)
			if env.SourceID != "docs" {
				t.Errorf("answer source = %q, want the capsule", env.SourceID)
			}
			if env.Principal != "alice" {
				t.Errorf("answer principal = %q, want the asker's", env.Principal)
			}
			got, err := tc.decode(data)
			if err != nil {
				t.Fatalf("answer %s: %v", data, err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("answer =\n %+v\nwant\n %+v", got, tc.want)
			}
		})
	}
}

func decodeAs[T any](raw json.RawMessage) (any, error) {
	var v T
	err := json.Unmarshal(raw, &v)
	return v, err
}

func TestRequestWithoutDataIsAnswered(t *testing.T) {
	h := newHarness(t, writeCapsule(t, docsFiles()))
	_, data := h.ask(t, ContextRequestTopic, ContextResponseTopic("docs"), `"not an object"`)
	var got ContextResponse
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if got.RequestID != "" || len(got.ContextFiles) != 1 {
		t.Errorf("answer = %+v, want the context files and no request id", got)
	}
}

func TestSurfaceOnlyForDeclaredKinds(t *testing.T) {
	m := writeCapsule(t, map[string]string{
		"Capsule.toml": "[package]\nname = \"ctx\"\nversion = \"0.1.0\"\n[[context_file]]\nname = \"a\"\nfile = \"a.md\"\n",
		"a.md":         "A",
	})
	s := New(m, nil).Surface()
	want := capsule.Surface{
		Publish:      []string{"static.v1.response.context.ctx"},
		Subscribe:    []string{ContextRequestTopic},
		Interceptors: []manifest.Interceptor{{Pattern: ContextRequestTopic, Handler: ContextHandler, Priority: manifest.DefaultPriority}},
	}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("Surface = %+v, want %+v", s, want)
	}
	bare := &manifest.Manifest{Package: manifest.Package{Name: "bare", Version: "0.1.0"}}
	if s := New(bare, nil).Surface(); len(s.Publish)+len(s.Subscribe)+len(s.Interceptors) != 0 {
		t.Errorf("a capsule with nothing static got surface %+v", s)
	}
}

func TestLoadFailures(t *testing.T) {
	const head = "[package]\nname = \"bad\"\nversion = \"0.1.0\"\n"
	outside := filepath.Join(t.TempDir(), "secret.md")
	if err := os.WriteFile(outside, []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		files  map[string]string
		mutate func(t *testing.T, dir string)
		want   string
	}{
		{
			name:  "file removed after the manifest was read",
			files: map[string]string{"Capsule.toml": head + "[[context_file]]\nname = \"a\"\nfile = \"a.md\"\n", "a.md": "x"},
			mutate: func(t *testing.T, dir string) {
				if err := os.Remove(filepath.Join(dir, "a.md")); err != nil {
					t.Fatal(err)
				}
			},
			want: "context_file a.md",
		},
		{
			name:  "symlink leaving the capsule directory",
			files: map[string]string{"Capsule.toml": head + "[[skill]]\nname = \"s\"\nfile = \"s.md\"\n", "s.md": "x"},
			mutate: func(t *testing.T, dir string) {
				p := filepath.Join(dir, "s.md")
				if err := os.Remove(p); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(outside, p); err != nil {
					t.Fatal(err)
				}
			},
			want: "skill s.md",
		},
		{
			name:  "too large",
			files: map[string]string{"Capsule.toml": head + "[[context_file]]\nname = \"a\"\nfile = \"a.md\"\n", "a.md": strings.Repeat("x", MaxFileBytes+1)},
			want:  "larger than",
		},
		{
			name:  "not text",
			files: map[string]string{"Capsule.toml": head + "[[context_file]]\nname = \"a\"\nfile = \"a.md\"\n", "a.md": "\xff\xfe"},
			want:  "not UTF-8",
		},
		{
			name:  "command file not TOML",
			files: map[string]string{"Capsule.toml": head + "[[command]]\nname = \"c\"\nfile = \"c.toml\"\n", "c.toml": "= nope"},
			want:  "command c: file c.toml: not valid TOML",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := writeCapsule(t, tc.files)
			if tc.mutate != nil {
				tc.mutate(t, m.Dir)
			}
			e := New(m, nil)
			err := e.Load(context.Background())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Load = %v, want an error containing %q", err, tc.want)
			}
			if h := e.Health(); h.State != capsule.Failed {
				t.Errorf("health = %s, want failed", h.State)
			}
		})
	}
}

func TestBuiltinWithFilesFails(t *testing.T) {
	m := &manifest.Manifest{
		Package:      manifest.Package{Name: "b", Version: "0.1.0"},
		ContextFiles: []manifest.ContextFile{{Name: "a", File: "a.md"}},
	}
	if err := New(m, nil).Load(context.Background()); err == nil || !strings.Contains(err.Error(), "no directory") {
		t.Fatalf("Load = %v, want a no-directory error", err)
	}
}

func TestOtherHandlersNotSupported(t *testing.T) {
	h := newHarness(t, writeCapsule(t, docsFiles()))
	if _, err := h.engine.Invoke(context.Background(), hostapi.Invocation{Handler: "tool_execute_x", Principal: "default"}); err == nil || !errors.Is(err, capsule.ErrNotSupported) {
		t.Fatalf("Invoke of a foreign handler = %v, want not supported", err)
	}
	if err := h.comp.Unload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := h.engine.Invoke(context.Background(), hostapi.Invocation{Handler: ContextHandler, Principal: "default"}); !errors.Is(err, capsule.ErrNotSupported) {
		t.Fatalf("Invoke after unload = %v, want not supported", err)
	}
}
