package ipc

import "testing"

func TestMemberEquals(t *testing.T) {
	for _, tc := range []struct {
		payload, name, want string
		equal               bool
	}{
		{`{"turn_id":"t-1","text":"x"}`, "turn_id", "t-1", true},
		{`{"text":"x", "turn_id" : "t-1"}`, "turn_id", "t-1", true},
		{`{"turn_id":"t-2"}`, "turn_id", "t-1", false},
		{`{"text":"x"}`, "turn_id", "t-1", false},
		{`{"turn_id":1}`, "turn_id", "1", false},
		{`{"turn_id":null}`, "turn_id", "", false},
		{`{"nested":{"turn_id":"t-1"}}`, "turn_id", "t-1", false},
		{`{"text":"\"turn_id\":\"t-1\""}`, "turn_id", "t-1", false},
		{`{"turn_id":"t\u002d1"}`, "turn_id", "t-1", true},
		{`{"turn\u005fid":"t-1"}`, "turn_id", "t-1", true},
		{`["turn_id","t-1"]`, "turn_id", "t-1", false},
		{`{"turn_id":"t-1"`, "turn_id", "t-1", false},
		{``, "turn_id", "", false},
	} {
		if got := MemberEquals([]byte(tc.payload), tc.name, tc.want); got != tc.equal {
			t.Errorf("MemberEquals(%s, %q, %q) = %v, want %v", tc.payload, tc.name, tc.want, got, tc.equal)
		}
	}
}

func FuzzMemberEquals(f *testing.F) {
	f.Add([]byte(`{"turn_id":"t-1"}`), "turn_id", "t-1")
	f.Add([]byte(`{"a":[1,{"b":"c"}],"turn_id":"x\n"}`), "turn_id", "x\n")
	f.Fuzz(func(t *testing.T, payload []byte, name, want string) {
		_ = MemberEquals(payload, name, want) // must not panic on any input
	})
}
