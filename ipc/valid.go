package ipc

import "github.com/astrid-go/astrid/internal/jsonscan"

// ValidJSON reports whether p is exactly one JSON value (RFC 8259) in valid
// UTF-8: what a payload must be. It accepts what json.Valid(p) &&
// utf8.Valid(p) accepts at a fraction of the cost (the dispatcher checks
// every payload published with it, and encoding/json's byte-at-a-time
// scanner was the largest item in its profile). UTF-8 matters because
// encoding/json lets invalid bytes through inside strings, which upstream's
// serde-based peers refuse.
func ValidJSON(p []byte) bool { return jsonscan.Valid(p) }
