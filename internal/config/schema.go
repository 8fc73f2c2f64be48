package config

import (
	"reflect"
	"sort"
	"strings"
	"sync"
)

// schema maps every dotted key Config accepts to what its value must be, for
// messages ("expected an integer") and suggestions for mistyped keys. It is
// derived from Config's toml tags, so it cannot drift from the struct. It is
// built on first use, not at init: every astrid process links this package,
// and most (a daemon client, --version) never read config.toml's errors.
var schema = sync.OnceValue(buildSchema)

var durationType = reflect.TypeFor[Duration]()

const durationWant = `a duration string such as "30s" or "5m"`

func buildSchema() map[string]string {
	out := map[string]string{}
	var walk func(prefix string, t reflect.Type)
	walk = func(prefix string, t reflect.Type) {
		for f := range t.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
			if name == "" || name == "-" {
				continue
			}
			key := prefix + name
			switch {
			case f.Type == durationType:
				out[key] = durationWant
			case f.Type.Kind() == reflect.Struct:
				out[key] = "a table"
				walk(key+".", f.Type)
			case f.Type.Kind() == reflect.Int:
				out[key] = "an integer"
			case f.Type.Kind() == reflect.String:
				out[key] = "a string"
			case f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.String:
				out[key] = "an array of strings"
			default:
				out[key] = "a " + f.Type.String()
			}
		}
	}
	walk("", reflect.TypeFor[Config]())
	return out
}

// suggest returns the known key closest to an unknown one, or "" when none
// is close enough to be a plausible typo.
func suggest(unknown string) string {
	keys := make([]string, 0, len(schema()))
	for k := range schema() {
		keys = append(keys, k)
	}
	sort.Strings(keys) // deterministic among ties
	best, bestDist := "", len(unknown)/3+1
	for _, k := range keys {
		if d := editDistance(unknown, k); d <= bestDist && (best == "" || d < bestDist) {
			best, bestDist = k, d
		}
	}
	// The key under the wrong table: "[log] queue_depth".
	if best == "" {
		last := unknown[strings.LastIndexByte(unknown, '.')+1:]
		for _, k := range keys {
			if strings.HasSuffix(k, "."+last) || k == last {
				return k
			}
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
