// Package webviewtest drives the web view in a real headless browser for
// tests: Debian's chromium-headless-shell through chromedp. It is imported
// only from _test.go files.
package webviewtest

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/astrid-go/astrid/internal/testutil"
)

// Patience bounds each wait for the page: only a broken page reaches it.
const Patience = 2 * time.Minute

// Browser starts a headless browser for t (testutil.Browser finds it, or
// skips the test outside CI) and returns a tab's context, valid until the
// test ends.
func Browser(t *testing.T) context.Context {
	t.Helper()
	path := testutil.Browser(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox, // tests may run as root, where Chromium's sandbox refuses to start
		chromedp.WindowSize(1400, 1100),
		chromedp.Flag("disable-dev-shm-usage", true),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(alloc, chromedp.WithErrorf(t.Logf))
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc()
	})
	// Start the browser now, so a browser that cannot start fails here.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("headless browser %s did not start: %v", path, err)
	}
	return ctx
}

// Do runs actions in the tab, failing t after Patience.
func Do(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, Patience)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// Eval evaluates the JavaScript expression js in the tab.
func Eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, Patience)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// WaitTrue polls the JavaScript expression js in the tab until it is true.
func WaitTrue(t *testing.T, ctx context.Context, what, js string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, Patience)
	defer cancel()
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js))
		if err != nil {
			t.Fatalf("waiting for %s (%s): %v", what, js, err)
		}
		if ok {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("gave up waiting for %s (%s)", what, js)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Screenshot saves the whole page as PNG file name (a test artefact:
// testutil.SaveArtifact).
func Screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, Patience)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	testutil.SaveArtifact(t, name, png)
}
