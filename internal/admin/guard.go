package admin

import (
	"crypto/subtle"
	"net/http"
	"net/url"
	"strings"
)

// tokenParam is the query parameter the token comes in once.
const tokenParam = "token"

// securityHeaders go on every answer, refusals included: no page of the
// server may be framed, sniffed, cached or leak its URL (and the token a
// first URL holds) in a Referer.
var securityHeaders = map[string]string{
	"Referrer-Policy":              "no-referrer",
	"X-Content-Type-Options":       "nosniff",
	"X-Frame-Options":              "DENY",
	"Cache-Control":                "no-store",
	"Content-Security-Policy":      "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
	"Cross-Origin-Opener-Policy":   "same-origin",
	"Cross-Origin-Resource-Policy": "same-origin",
}

// guard checks every request before next sees it, in this order: the Host
// names this server (a rebound DNS name does not), the Origin, when there
// is one, is this server's, the request is not a cross-site one the
// browser marked, and it carries the token. A token in the query is
// traded for a cookie and the browser sent back to the same URL without
// it, so that the token leaves the address bar and the history.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range securityHeaders {
			w.Header().Set(k, v)
		}
		if !s.hosts[strings.ToLower(r.Host)] {
			s.refuse(w, r, http.StatusForbidden, "wrong host")
			return
		}
		if origin, sent := r.Header["Origin"]; sent && (len(origin) != 1 || !s.origins[strings.ToLower(origin[0])]) {
			s.refuse(w, r, http.StatusForbidden, "wrong origin")
			return
		}
		if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
			s.refuse(w, r, http.StatusForbidden, "cross-site request")
			return
		}
		if q := r.URL.Query(); q.Has(tokenParam) {
			if !s.validToken(q.Get(tokenParam)) || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
				s.refuse(w, r, http.StatusUnauthorized, "wrong token")
				return
			}
			http.SetCookie(w, &http.Cookie{
				Name: s.cookie, Value: s.token, Path: "/",
				HttpOnly: true, SameSite: http.SameSiteStrictMode,
			})
			q.Del(tokenParam)
			clean := url.URL{Path: r.URL.Path, RawQuery: q.Encode()}
			http.Redirect(w, r, clean.String(), http.StatusSeeOther)
			return
		}
		if !s.validToken(s.presented(r)) {
			s.refuse(w, r, http.StatusUnauthorized, "no valid token")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// presented is the token a request carries in its Authorization header
// (Bearer) or, failing that, its cookie; "" for none.
func (s *Server) presented(r *http.Request) string {
	if auth := r.Header.Get("Authorization"); auth != "" {
		scheme, tok, ok := strings.Cut(auth, " ")
		if ok && strings.EqualFold(scheme, "Bearer") {
			return strings.TrimSpace(tok)
		}
		return ""
	}
	if c, err := r.Cookie(s.cookie); err == nil {
		return c.Value
	}
	return ""
}

// validToken compares in constant time: the answer's timing says nothing
// of how much of a guess was right.
func (s *Server) validToken(tok string) bool {
	return tok != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(s.token)) == 1
}

// refuse answers a request that failed a check; the answer echoes nothing
// of the request.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, code int, why string) {
	s.log.Info("admin request refused", "why", why, "remote", r.RemoteAddr, "method", r.Method, "path", r.URL.Path)
	http.Error(w, http.StatusText(code)+": "+why, code)
}
