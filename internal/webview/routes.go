package webview

import (
	"embed"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"time"
)

//go:embed assets
var assets embed.FS

// ServeHTTP answers the page and its data (docs/webview.md lists them).
// The admin server has checked the request before it comes here.
func (v *View) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	v.routes().ServeHTTP(w, r)
}

func (v *View) routes() *http.ServeMux {
	v.muxOnce.Do(func() {
		static, _ := fs.Sub(assets, "assets") // a literal directory of the embed
		mux := http.NewServeMux()
		mux.Handle("GET /{$}", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.ServeFileFS(w, r, static, "index.html")
		}))
		mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
		mux.HandleFunc("GET /api/graph", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, v.currentGraph()) })
		mux.HandleFunc("GET /api/state", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, v.tick(false)) })
		mux.HandleFunc("GET /api/notice", func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, struct {
				Notice string `json:"notice"`
			}{v.opts.Notice})
		})
		mux.HandleFunc("GET /api/answer/{id}", func(w http.ResponseWriter, r *http.Request) {
			enc, ok := v.turns.answer(r.PathValue("id"))
			if !ok {
				http.Error(w, "no such answer (its turn left the recent list)", http.StatusNotFound)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(enc)
		})
		mux.HandleFunc("GET /api/events", v.serveEvents)
		v.mux = mux
	})
	return v.mux
}

// writeJSON answers v as JSON. encoding/json escapes <, > and & in
// strings, so even a page that forgot to treat a value as text would not
// find markup in it.
func writeJSON(w http.ResponseWriter, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "not encoded", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(data)
}

// serveEvents streams a tick every interval until the client goes, the
// view closes, or the client falls ClientBuffer ticks behind (then the
// hub drops it and the stream ends: EventSource reconnects by itself).
func (v *View) serveEvents(w http.ResponseWriter, r *http.Request) {
	c := v.hub.join()
	if c == nil {
		http.Error(w, "too many event streams", http.StatusServiceUnavailable)
		return
	}
	defer v.hub.leave(c)
	v.watch()
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	write := func(msg []byte) error {
		if err := rc.SetWriteDeadline(time.Now().Add(v.opts.WriteTimeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return err
		}
		if _, err := w.Write(msg); err != nil {
			return err
		}
		return rc.Flush()
	}
	first, err := encodeTick(v.tick(false))
	if err != nil || write(append([]byte("retry: 2000\n\n"), first...)) != nil {
		return
	}
	for {
		select {
		case msg := <-c.ch:
			if write(msg) != nil {
				return
			}
		case <-c.gone:
			return
		case <-r.Context().Done():
			return
		}
	}
}

// watch opens the observer ring now rather than at the next tick, so a
// page that just connected sees rates at its first update.
func (v *View) watch() {
	v.flowMu.Lock()
	defer v.flowMu.Unlock()
	if v.flow == nil {
		v.flow = startFlow(v.src.Observe())
		v.lastTake = time.Now()
	}
}
