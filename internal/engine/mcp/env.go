package mcp

import (
	"os"
	"sort"
	"strings"
)

// inherited are the variables of astrid's own environment a server gets:
// what programs need to find themselves and behave (PATH, HOME, locale,
// temp dir). Nothing else leaks through, so an operator's API keys reach a
// server only when the capsule's [env] holds them.
var inherited = []string{"PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "SYSTEMROOT"}

// environ is the server's environment: the inherited variables, then the
// capsule's [env] values, which win. Keys no environment can hold are
// returned in skipped.
func environ(capsuleEnv map[string]string) (env, skipped []string) {
	vars := map[string]string{}
	for _, k := range inherited {
		if v, ok := os.LookupEnv(k); ok {
			vars[k] = v
		}
	}
	for k, v := range capsuleEnv {
		if k == "" || strings.ContainsAny(k, "=\x00") || strings.ContainsRune(v, 0) {
			skipped = append(skipped, k)
			continue
		}
		vars[k] = v
	}
	out := make([]string, 0, len(vars))
	for k, v := range vars {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	sort.Strings(skipped)
	return out, skipped
}
