package react

import (
	_ "embed"
	"fmt"
	"strconv"
	"strings"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// envPrices is the [env] key of the operator's prices (docs/agent.md,
// "Usage and cost"): entries "<provider>:<model>=<input>/<output>[/<cached
// input>]", in US dollars per million tokens, separated by commas or
// semicolons. Each overrides the built-in table's entry for that model
// (or adds one): prices change more often than releases, and the
// operator, who pays, has the last word.
const envPrices = "prices"

// builtinPrices is the built-in table, in the [env] syntax, one entry a
// line with "#" comments saying where each figure comes from and when. It
// is data, not code, so a price change is a one-line edit of prices.txt.
//
//go:embed prices.txt
var builtinPrices string

// defaultPrices is builtinPrices parsed; its problems (none, as a test
// checks) would leave entries out.
var defaultPrices, defaultPriceProblems = parsePrices(stripComments(builtinPrices))

// stripComments drops what follows "#" on each line, so that a comment's
// commas are no entry separators.
func stripComments(text string) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if before, _, found := strings.Cut(l, "#"); found {
			lines[i] = before
		}
	}
	return strings.Join(lines, "\n")
}

// priceTable is the built-in table with the entries of raw (the [env]
// value) over it; raw's entries that do not parse are left out (the
// built-in entry stands) and named in problems.
func priceTable(raw string) (table map[string]price, problems []string) {
	table = make(map[string]price, len(defaultPrices))
	for id, p := range defaultPrices {
		table[id] = p
	}
	if strings.TrimSpace(raw) == "" {
		return table, nil
	}
	override, problems := parsePrices(raw)
	for id, p := range override {
		table[id] = p
	}
	return table, problems
}

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
// neither the operator's prices nor the built-in table know it (or the
// model is the provider's unnamed default): a frontend then shows tokens
// only.
func turnCost(c *sdk.Call, provider, model string, u ipc.Usage) *float64 {
	if model == "" {
		return nil
	}
	raw, _ := c.Config(envPrices)
	table, problems := priceTable(raw)
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
