package config

import "testing"

// FuzzParse: no input panics, and whatever is accepted is valid.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"",
		"call_deadline = \"5m\"\n[limits]\nqueue_depth = 8\n[egress]\nallow = [\"localhost:80\", \"10.0.0.0/8\"]\n[log]\nlevel = \"warn\"\n",
		"limits = { queue_depth = 1, max_message_bytes = 2 }\n",
		"log.level = \"debug\"\nlimits.wasm_memory_mib = 4096\n",
		"[limits\n",
		"call_deadline = 5\n",
		"[[limits]]\nqueue_depth = 1\n",
		"egress = { allow = [[\"a\"]] }\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := parse("fuzz.toml", data)
		if err != nil {
			return
		}
		if err := c.validate("fuzz.toml", nil); err != nil {
			t.Fatalf("accepted a config that does not validate: %v\n%q", err, data)
		}
	})
}
