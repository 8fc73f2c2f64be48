package ipc

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// Golden tests of the envelope's wire form (upstream's IpcMessage).

var goldenEnvelopes = map[string]Envelope{
	"full": {
		Topic:      UserPromptTopic,
		Payload:    json.RawMessage(`{"type":"user_input","text":"hi","session_id":"default"}`),
		SourceID:   "cli",
		Timestamp:  time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC).UnixNano(),
		Seq:        7,
		Principal:  "alice",
		Provenance: &Provenance{Signature: Signature{1, 2, 255}, DeviceKeyID: "dk1", Origin: OriginLocalSocket},
	},
	"system": {
		Topic:     CapsulesLoadedTopic,
		Payload:   json.RawMessage(`{"type":"custom","data":{}}`),
		SourceID:  KernelSourceID,
		Timestamp: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC).UnixNano(),
		Seq:       1,
	},
	"remote_gateway": {
		Topic:      UserPromptTopic,
		Payload:    json.RawMessage(`{"type":"user_input","text":"hi","session_id":"default"}`),
		SourceID:   "gateway",
		Timestamp:  time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC).UnixNano(),
		Seq:        2,
		Principal:  "bob",
		Provenance: &Provenance{Origin: OriginRemoteGateway},
	},
	// A traced envelope: what crosses a transport (the daemon's socket,
	// NATS) when tracing is on keeps its trace context.
	"traced": {
		Topic:     ToolRequestExecuteTopic,
		Payload:   json.RawMessage(`{"type":"custom","data":{}}`),
		SourceID:  "astrid-capsule-react",
		Timestamp: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC).UnixNano(),
		Seq:       3,
		Principal: "alice",
		Provenance: &Provenance{Trace: TraceContext{
			TraceID: [16]byte{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36},
			SpanID:  [8]byte{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7},
			Flags:   TraceFlagSampled,
		}},
	},
}

func TestGoldenEnvelopes(t *testing.T) {
	for name, env := range goldenEnvelopes {
		t.Run(name, func(t *testing.T) {
			want := readGolden(t, "envelope", name)
			got, err := json.Marshal(&env)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("encode:\n got %s\nwant %s", got, want)
			}
			var back Envelope
			if err := json.Unmarshal(want, &back); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back, env) {
				t.Errorf("decode:\n got %#v\nwant %#v", back, env)
			}
		})
	}
}

func TestEnvelopeOptionalFields(t *testing.T) {
	got, err := json.Marshal(&Envelope{Topic: "a.b", Payload: json.RawMessage(`{"type":"connect"}`), SourceID: "x"})
	if err != nil {
		t.Fatal(err)
	}
	s := string(got)
	if !strings.Contains(s, `"signature":null`) {
		t.Errorf("absent signature must be written as null: %s", s)
	}
	if !strings.Contains(s, `"seq":0`) {
		t.Errorf("seq is always written: %s", s)
	}
	for _, key := range []string{`"principal"`, `"device_key_id"`, `"origin"`} {
		if strings.Contains(s, key) {
			t.Errorf("%s must be left out when empty: %s", key, s)
		}
	}
}

// TestEnvelopeCLIProxyFrame: the three-field frame a CLI proxy forwards
// parses, with seq 0, no signature, no principal and origin system.
func TestEnvelopeCLIProxyFrame(t *testing.T) {
	var env Envelope
	frame := `{"topic":"user.v1.prompt","payload":{"type":"user_input","text":"hi"},"source_id":"cli"}`
	if err := json.Unmarshal([]byte(frame), &env); err != nil {
		t.Fatalf("minimal frame: %v", err)
	}
	if env.Topic != UserPromptTopic || env.SourceID != "cli" || env.Seq != 0 || env.Signature() != nil ||
		env.Principal != "" || env.DeviceKeyID() != "" || env.Origin() != OriginSystem || env.Provenance != nil {
		t.Errorf("minimal frame decoded as %#v", env)
	}
	if got := DecodePayload(env.Payload); !reflect.DeepEqual(got, UserInput{Text: "hi", SessionID: DefaultSessionID}) {
		t.Errorf("payload decoded as %#v", got)
	}
}

func TestEnvelopeOrigin(t *testing.T) {
	cases := []struct {
		json string
		want Origin
	}{
		{`"local_socket"`, OriginLocalSocket},
		{`"remote_gateway"`, OriginRemoteGateway},
		{`"system"`, OriginSystem},
		{`"future_listener"`, OriginSystem},
		{`"LOCAL_SOCKET"`, OriginSystem},
		{`7`, OriginSystem},
		{`null`, OriginSystem},
	}
	for _, c := range cases {
		o := OriginLocalSocket
		if err := json.Unmarshal([]byte(c.json), &o); err != nil || o != c.want {
			t.Errorf("origin %s = %q, %v; want %q", c.json, o, err, c.want)
		}
		var env Envelope
		frame := `{"topic":"a","payload":{},"source_id":"x","origin":` + c.json + `}`
		if err := json.Unmarshal([]byte(frame), &env); err != nil || env.Origin() != c.want {
			t.Errorf("envelope origin %s = %q, %v; want %q", c.json, env.Origin(), err, c.want)
		}
	}
}

func TestEnvelopeSignature(t *testing.T) {
	cases := []struct {
		json    string
		want    Signature
		wantErr bool
	}{
		{`null`, nil, false},
		{`[]`, Signature{}, false},
		{`[0,1,255]`, Signature{0, 1, 255}, false},
		{`[256]`, nil, true},
		{`[-1]`, nil, true},
		{`"AAE="`, nil, true},
	}
	for _, c := range cases {
		var env Envelope
		frame := `{"topic":"a","payload":{},"source_id":"x","signature":` + c.json + `}`
		err := json.Unmarshal([]byte(frame), &env)
		if (err != nil) != c.wantErr || (!c.wantErr && !reflect.DeepEqual(env.Signature(), c.want)) {
			t.Errorf("signature %s = %v, %v; want %v (error %v)", c.json, env.Signature(), err, c.want, c.wantErr)
		}
	}
}

// TestEnvelopeUpstreamTimestamp: chrono writes fractional seconds in groups
// of three digits; they parse.
func TestEnvelopeUpstreamTimestamp(t *testing.T) {
	var env Envelope
	frame := `{"topic":"a","payload":{},"source_id":"x","timestamp":"2026-05-01T12:00:00.500Z","seq":3}`
	if err := json.Unmarshal([]byte(frame), &env); err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2026, 5, 1, 12, 0, 0, 500e6, time.UTC); !env.Time().Equal(want) || env.Seq != 3 {
		t.Errorf("decoded %v seq %d", env.Time(), env.Seq)
	}
}

// TestEnvelopeTimestampRange: Timestamp holds Unix nanoseconds in an int64;
// a frame's timestamp outside what that can hold is refused, not wrapped to
// another date, and one inside keeps every nanosecond and its zone as UTC.
func TestEnvelopeTimestampRange(t *testing.T) {
	for _, c := range []struct {
		stamp   string
		wantErr bool
	}{
		{"2262-04-11T23:47:16.854775807Z", false},
		{"1677-09-21T00:12:43.145224192Z", false},
		{"2262-04-11T23:47:16.854775808Z", true},
		{"1600-01-01T00:00:00Z", true},
		{"9999-12-31T23:59:59Z", true},
		{"2026-05-01T14:00:00.000000001+02:00", false},
	} {
		var env Envelope
		frame := `{"topic":"a","payload":{},"source_id":"x","timestamp":"` + c.stamp + `"}`
		err := json.Unmarshal([]byte(frame), &env)
		if (err != nil) != c.wantErr {
			t.Errorf("timestamp %s: error %v, want error %v", c.stamp, err, c.wantErr)
			continue
		}
		if err != nil {
			continue
		}
		want, _ := time.Parse(time.RFC3339Nano, c.stamp)
		if got := env.Time(); !got.Equal(want) || got.Location() != time.UTC {
			t.Errorf("timestamp %s decoded as %v", c.stamp, got)
		}
	}
	var unstamped Envelope
	if !unstamped.Time().IsZero() {
		t.Errorf("an unstamped envelope's Time is %v, want the zero time", unstamped.Time())
	}
}

func TestEnvelopePrincipalRoundTrip(t *testing.T) {
	in := Envelope{Topic: "a", Payload: json.RawMessage(`{}`), SourceID: "x", Principal: "bob"}
	raw, err := json.Marshal(&in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"principal":"bob"`) {
		t.Errorf("principal missing from %s", raw)
	}
	var out Envelope
	if err := json.Unmarshal(raw, &out); err != nil || out.Principal != "bob" {
		t.Errorf("round trip gave %q, %v", out.Principal, err)
	}
}
