package host

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/dispatch"
)

// hostMethods lists the methods of hostapi.Host, by reflection over the
// interface type, so that a method added to it is seen here.
func hostMethods() []string {
	ht := reflect.TypeFor[hostapi.Host]()
	out := make([]string, ht.NumMethod())
	for i := range out {
		out[i] = ht.Method(i).Name
	}
	return out
}

// TestEveryHostMethodIsClassified: a hostapi.Host method that is not said
// to wait or not could deadlock a handler that waits for what its own
// publish caused (dispatch.Runner), so every one must be in methods, and
// methods must name nothing else.
func TestEveryHostMethodIsClassified(t *testing.T) {
	byName := map[string]kind{}
	for o, m := range methods {
		if m.name == "" {
			t.Errorf("op %d has no entry in methods", o)
			continue
		}
		byName[m.name] = m.kind
	}
	host := map[string]bool{}
	for _, name := range hostMethods() {
		host[name] = true
		switch k, ok := byName[name]; {
		case !ok:
			t.Errorf("hostapi.Host method %s is not in host.methods: classify it as waits or instant", name)
		case k != instant && k != waits:
			t.Errorf("hostapi.Host method %s is unclassified: say whether it waits", name)
		}
	}
	for name := range byName {
		if !host[name] {
			t.Errorf("host.methods names %s, which is not a hostapi.Host method", name)
		}
	}
}

// TestEveryHostMethodGoesThroughTheWrapper reads this package's source: the
// first statement of each Call method implementing hostapi.Host must be
// `defer call.leave(call.enter(opName))`, with its own op.
func TestEveryHostMethodGoesThroughTheWrapper(t *testing.T) {
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || fn.Body == nil || !isCallReceiver(fn.Recv) {
				continue
			}
			seen[fn.Name.Name] = true
			if !isHostMethod(fn.Name.Name) {
				continue
			}
			want := fmt.Sprintf("defer call.leave(call.enter(op%s))", fn.Name.Name)
			if len(fn.Body.List) == 0 || statement(fset, fn.Body.List[0]) != want {
				t.Errorf("%s: Call.%s does not begin with %s", fset.Position(fn.Pos()), fn.Name.Name, want)
			}
		}
	}
	for _, name := range hostMethods() {
		if !seen[name] {
			t.Errorf("no Call.%s found in the package's source", name)
		}
	}
}

func isCallReceiver(recv *ast.FieldList) bool {
	if len(recv.List) != 1 {
		return false
	}
	star, ok := recv.List[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	id, ok := star.X.(*ast.Ident)
	return ok && id.Name == "Call"
}

func isHostMethod(name string) bool {
	for _, m := range hostMethods() {
		if m == name {
			return true
		}
	}
	return false
}

// statement prints s as one line of Go.
func statement(fset *token.FileSet, s ast.Stmt) string {
	d, ok := s.(*ast.DeferStmt)
	if !ok {
		return fmt.Sprintf("%T", s)
	}
	outer, ok := d.Call.Fun.(*ast.SelectorExpr)
	if !ok || len(d.Call.Args) != 1 {
		return "defer ..."
	}
	inner, ok := d.Call.Args[0].(*ast.CallExpr)
	if !ok || len(inner.Args) != 1 {
		return "defer ..."
	}
	innerFn, ok := inner.Fun.(*ast.SelectorExpr)
	arg, ok2 := inner.Args[0].(*ast.Ident)
	if !ok || !ok2 {
		return "defer ..."
	}
	return fmt.Sprintf("defer %s.%s(%s.%s(%s))", outer.X, outer.Sel.Name, innerFn.X, innerFn.Sel.Name, arg.Name)
}

// probe is an interceptor target that reports which Runner made its call.
type probe struct{ ran chan *dispatch.Runner }

func (p probe) Intercept(ctx context.Context, _ dispatch.Invocation) (dispatch.Verdict, error) {
	p.ran <- dispatch.RunnerFrom(ctx)
	return dispatch.Verdict{}, nil
}

// TestWaitingMethodsHandOffAdoptedWork: a handler's publish is adopted by
// the goroutine running the handler (a Runner); entering a method that
// waits hands that call to a worker, so a handler waiting for its answer
// does not wait on itself; entering an instant one leaves it to the Runner.
func TestWaitingMethodsHandOffAdoptedWork(t *testing.T) {
	f := newFixture(t)
	c := f.capsule(t, homeCapsule)
	p := probe{ran: make(chan *dispatch.Runner, 1)}
	d := f.deps.Dispatcher
	if err := d.Register(dispatch.CapsuleACL{
		ID: "probe", Subscribe: []string{"notes.v1.saved"},
		Interceptors: []dispatch.Interceptor{{Pattern: "notes.v1.saved", Handler: "h"}},
	}, p); err != nil {
		t.Fatal(err)
	}
	for o, m := range methods {
		t.Run(m.name, func(t *testing.T) {
			if m.kind != instant && m.kind != waits {
				t.Fatalf("op %d is unclassified", o)
			}
			// A principal of its own: a queue the Runner can adopt (no
			// worker lingers on it from another method's turn).
			call, _ := c.Begin(context.Background(), fmt.Sprintf("p%d", o))
			defer call.End()
			rn := d.NewRunner()
			rn.Open()
			defer rn.Close()
			call.caller.Runner = rn
			if err := call.Publish("notes.v1.saved", []byte(`{}`)); err != nil {
				t.Fatal(err)
			}
			call.leave(call.enter(op(o)))
			if m.kind == instant {
				rn.Run()
			}
			select {
			case by := <-p.ran:
				if handedOff := by != rn; handedOff != (m.kind == waits) {
					t.Errorf("%s (waits: %v): the adopted call was handed off: %v", m.name, m.kind == waits, handedOff)
				}
			case <-time.After(testWait):
				t.Fatal("the published call never ran")
			}
		})
	}
}

// testWait bounds a wait so that a bug fails instead of hanging; it is no
// speed assertion.
const testWait = 10 * time.Second
