// Package jsonscan owns the JSON scanning the wire codec and the sdk share:
// a full validator (Valid: exactly one JSON value in valid UTF-8, what
// json.Valid && utf8.Valid accept), a structural scan of an object's
// top-level members (ScanObject, MissingKey), the "plain string" tests and
// decoders that let a codec slice a string out instead of decoding it
// (PlainPrefix, PlainLiteral, DecodeString, DecodeStrings), and the check
// that refuses unpaired UTF-16 surrogate escapes (LoneSurrogate).
//
// It is a leaf helper (DESIGN §3): it imports nothing of this module,
// builds for GOOS=wasip1 GOARCH=wasm, holds no state and does no I/O. It
// knows JSON's grammar, never a payload's meaning: which members a message
// has and what they mean belongs to ipc. Every scanner here must agree with
// encoding/json on what it accepts (its fuzz targets hold it to that) and
// must never panic on any input.
package jsonscan
