package react

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// envPrices is the [env] key of the price table (docs/agent.md, "Usage
// and cost"): entries "<provider>:<model>=<input>/<output>[/<cached
// input>]", in US dollars per million tokens, separated by commas or
// semicolons. It ships empty: prices change more often than releases, and
// a stale figure shown as a cost misleads more than none.
const envPrices = "prices"

// price is one model's, in dollars per million tokens.
type price struct {
	input, output, cached float64
}

// parsePrices reads the table; entries that do not parse are left out and
// named in problems.
func parsePrices(raw string) (table map[string]price, problems []string) {
	table = map[string]price{}
	for _, e := range modelTable(raw, "<input>/<output>[/<cached input>]", &problems) {
		entry, id, figures := e.entry, e.id, e.value
		parts := strings.Split(figures, "/")
		var nums []float64
		for _, p := range parts {
			n, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
			if err != nil || n < 0 || n > 1e6 {
				break
			}
			nums = append(nums, n)
		}
		if len(nums) != len(parts) || len(nums) < 2 || len(nums) > 3 {
			problems = append(problems, fmt.Sprintf("%q: want two or three prices from 0 to 1000000 dollars per million tokens", entry))
			continue
		}
		p := price{input: nums[0], output: nums[1], cached: nums[0]}
		if len(nums) == 3 {
			p.cached = nums[2]
		}
		table[id] = p
	}
	return table, problems
}

// cost is what u cost at p, in dollars.
func (p price) cost(u ipc.Usage) float64 {
	cached := min(u.CachedTokens, u.InputTokens)
	return (float64(u.InputTokens-cached)*p.input + float64(cached)*p.cached + float64(u.OutputTokens)*p.output) / 1e6
}

// turnCost is the price of a turn's usage with provider's model, nil when
// the table does not know it (or the model is the provider's unnamed
// default): a frontend then shows tokens only.
func turnCost(c *sdk.Call, provider, model string, u ipc.Usage) *float64 {
	raw, _ := c.Config(envPrices)
	if strings.TrimSpace(raw) == "" || model == "" {
		return nil
	}
	table, problems := parsePrices(raw)
	for _, p := range problems {
		c.Log(hostapi.LogWarn, "react: [env] "+envPrices+": "+p)
	}
	p, ok := table[provider+":"+model]
	if !ok {
		return nil
	}
	v := p.cost(u)
	return &v
}

// tableEntry is one "<provider>:<model>=<value>" entry of an [env] table.
type tableEntry struct {
	entry, id, value string
}

// modelTable splits an [env] table of "<provider>:<model>=<value>"
// entries (separated by commas, semicolons or newlines) into its
// entries; one whose key is not a model id is left out and named in
// problems, with want describing the value.
func modelTable(raw, want string, problems *[]string) []tableEntry {
	var out []tableEntry
	for _, entry := range strings.FieldsFunc(raw, func(r rune) bool { return r == ',' || r == ';' || r == '\n' }) {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		id, value, ok := strings.Cut(entry, "=")
		id = strings.TrimSpace(id)
		if _, _, valid := ipc.SplitModelID(id); !ok || !valid {
			*problems = append(*problems, fmt.Sprintf("%q is not <provider>:<model>=%s", entry, want))
			continue
		}
		out = append(out, tableEntry{entry: entry, id: id, value: value})
	}
	return out
}
