package sdk

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

type name string

type flatTestArgs struct {
	Path  string  `json:"path"`
	Start *int    `json:"start,omitempty"`
	N     int     `json:"n"`
	N8    int8    `json:"n8,omitempty"`
	N32   int32   `json:"n32,omitempty"`
	On    bool    `json:"on,omitempty"`
	PB    *bool   `json:"pb"`
	PS    *string `json:"ps"`
	Name  name    `json:"name,omitempty"`
	Plain string
	//lint:ignore U1000 an unexported field is not a key: the decoders must skip it
	hidden string
	Skip   string `json:"-"`
}

var flatTestRequired = func() []string {
	_, req, err := schemaOf[flatTestArgs]()
	if err != nil {
		panic(err)
	}
	return req
}()

func TestFlatArgsTakeTheUsualCall(t *testing.T) {
	flat := newFlatArgs(reflect.TypeFor[flatTestArgs]())
	if flat == nil {
		t.Fatal("no flat decoder for a flat struct")
	}
	raw := []byte(`{"path":"src/main.go","start":3,"n":-12,"n8":127,"n32":-5,"on":true,"pb":false,"ps":"é\n\"q\"\t\\\\","name":"x","Plain":"p"}`)
	var got flatTestArgs
	ok, err := flat.decode(raw, reflect.ValueOf(&got).Elem(), flatTestRequired)
	if !ok || err != nil {
		t.Fatalf("decode: %v, %v", ok, err)
	}
	var want flatTestArgs
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded %+v, encoding/json %+v", got, want)
	}
	// One copy of the strings, and the struct itself, which reflect
	// moves to the heap (as encoding/json does); one more per pointer
	// field set.
	small := []byte(`{"path":"small.txt","n":1,"Plain":"p"}`)
	if n := testing.AllocsPerRun(100, func() {
		var a flatTestArgs
		_, _ = flat.decode(small, reflect.ValueOf(&a).Elem(), flatTestRequired)
	}); n > 2 {
		t.Fatalf("%v allocations for three plain fields, want 2", n)
	}
}

func TestFlatArgsLeaveTheRestToEncodingJSON(t *testing.T) {
	flat := newFlatArgs(reflect.TypeFor[flatTestArgs]())
	for _, raw := range []string{
		`{"PATH":"a","n":1,"Plain":"p"}`,          // another case: encoding/json folds it
		`{"path":"a\u0041","n":1,"Plain":"p"}`,    // a \u escape
		`{"path":"a","n":1.0,"Plain":"p"}`,        // a float for an int
		`{"path":"a","n":1e2,"Plain":"p"}`,        // an exponent
		`{"path":"a","n8":128,"n":1,"Plain":"p"}`, // out of range
		`{"path":"a","n":"1","Plain":"p"}`,        // a string for an int
		`{"path":"a","n":1,"Plain":"p","x":1}`,    // an unknown key
		`{"path":"a","n":1,"Plain":{"a":1}}`,      // an object for a string
		`{"pa\u0074h":"a","n":1,"Plain":"p"}`,     // an escaped key
		`{"path":"a","n":01,"Plain":"p"}`,         // not JSON
		`{"path":"a","n":1,"Plain":"p"`,           // not an object
	} {
		var got flatTestArgs
		if ok, _ := flat.decode([]byte(raw), reflect.ValueOf(&got).Elem(), flatTestRequired); ok || got != (flatTestArgs{}) {
			t.Errorf("%s: taken (%v) or written (%+v)", raw, ok, got)
		}
	}
	for _, typ := range []reflect.Type{
		reflect.TypeFor[struct{ F float64 }](),
		reflect.TypeFor[struct{ S []string }](),
		reflect.TypeFor[struct{ R json.RawMessage }](),
		reflect.TypeFor[struct{ N struct{ A string } }](),
		reflect.TypeFor[struct{ flatTestArgs }](),
		reflect.TypeFor[struct {
			N int `json:"n,string"`
		}](),
		// Two fields of one name (made through reflect: vet refuses the
		// literal).
		reflect.StructOf([]reflect.StructField{
			{Name: "A", Type: reflect.TypeFor[string](), Tag: `json:"a"`},
			{Name: "B", Type: reflect.TypeFor[string](), Tag: `json:"a"`},
		}),
		reflect.TypeFor[struct{ T textName }](),
		reflect.TypeFor[struct{ P *name }](),
	} {
		if newFlatArgs(typ) != nil {
			t.Errorf("a flat decoder for %s", typ)
		}
	}
}

type textName string

func (n *textName) UnmarshalText(b []byte) error {
	*n = textName(strings.ToUpper(string(b)))
	return nil
}

// FuzzFlatArgs: decoding through the flat decoder gives what decodeArgs
// (encoding/json) gives: the same struct, or the same error.
func FuzzFlatArgs(f *testing.F) {
	f.Add([]byte(`{"path":"a","n":1,"Plain":"p"}`))
	f.Add([]byte(`{"path":"a","start":null,"n":-9223372036854775808,"pb":true,"ps":null,"Plain":"p","path":"b"}`))
	f.Add([]byte(`{"path":"a"}`))
	f.Add([]byte(`{"path":"a\nb\"c\u00e9","n":1,"Plain":"\\\/","ps":"\t"}`))
	f.Add([]byte(` null `))
	f.Add([]byte(`{"n":1,"n8":-128,"n32":2147483648,"Plain":""}`))
	flat := newFlatArgs(reflect.TypeFor[flatTestArgs]())
	f.Fuzz(func(t *testing.T, raw []byte) {
		var got, want flatTestArgs
		errGot := decodeArgsFlat(flat, raw, flatTestRequired, &got)
		errWant := decodeArgs(raw, flatTestRequired, &want)
		if (errGot == nil) != (errWant == nil) || (errGot != nil && errGot.Error() != errWant.Error()) {
			t.Fatalf("%q: error %v, encoding/json's %v", raw, errGot, errWant)
		}
		if errGot == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: decoded %+v, encoding/json %+v", raw, got, want)
		}
	})
}
