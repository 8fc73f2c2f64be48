package host

import (
	"bytes"
	"errors"
	"io"
	"net/http"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/egress"
	"github.com/astrid-go/astrid/internal/gate"
)

// HTTPDo implements hostapi.HTTP through the capsule's egress client, which
// checks `net` for every hop and the address actually connected.
func (call *Call) HTTPDo(r hostapi.HTTPRequest) (hostapi.HTTPResponse, error) {
	defer call.leave(call.enter(opHTTPDo))
	if err := call.live("http"); err != nil {
		return hostapi.HTTPResponse{}, err
	}
	if len(r.Body) > hostapi.MaxHTTPBody {
		return hostapi.HTTPResponse{}, hostapi.Errorf(hostapi.CodeTooLarge, "http", "request body over %d bytes", hostapi.MaxHTTPBody)
	}
	method := r.Method
	if method == "" {
		method = http.MethodGet
	}
	req, err := http.NewRequestWithContext(call.egressCtx(), method, r.URL, bytes.NewReader(r.Body))
	if err != nil {
		return hostapi.HTTPResponse{}, hostapi.Errorf(hostapi.CodeInvalid, "http", "%v", err)
	}
	for k, vs := range r.Headers {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	resp, err := call.c.http.Do(req)
	if err != nil {
		if errors.Is(err, egress.ErrForbiddenAddress) || errors.Is(err, egress.ErrDenied) || errors.Is(err, gate.ErrDenied) || errors.Is(err, egress.ErrInvalidAddress) {
			return hostapi.HTTPResponse{}, hostapi.Errorf(hostapi.CodeDenied, "http", "%v", err)
		}
		if lerr := call.live("http"); lerr != nil {
			return hostapi.HTTPResponse{}, lerr
		}
		return hostapi.HTTPResponse{}, hostapi.Errorf(hostapi.CodeIO, "http", "%v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, hostapi.MaxHTTPBody+1))
	if err != nil {
		return hostapi.HTTPResponse{}, hostapi.Errorf(hostapi.CodeIO, "http", "read body: %v", err)
	}
	if len(body) > hostapi.MaxHTTPBody {
		return hostapi.HTTPResponse{}, hostapi.Errorf(hostapi.CodeTooLarge, "http", "response body over %d bytes", hostapi.MaxHTTPBody)
	}
	return hostapi.HTTPResponse{Status: resp.StatusCode, Headers: resp.Header, Body: body}, nil
}
