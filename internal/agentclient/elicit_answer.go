package agentclient

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/astrid-go/astrid/ipc"
)

// ParseElicitAnswer reads the line a person typed as the answer to
// question id asking for f, the way every terminal frontend takes it:
// "-" alone declines (an answer with neither value nor values); an empty
// line takes the default, if there is one; a select takes an option's
// number or its text; an array takes comma-separated values. A line that
// does not fit is an error saying why, for the person to type again.
func ParseElicitAnswer(id string, f ipc.OnboardingField, line string) (ipc.ElicitResponse, error) {
	r := ipc.ElicitResponse{RequestID: id}
	if strings.TrimSpace(line) == "-" {
		return r, nil
	}
	if line == "" && f.Default != nil {
		line = *f.Default
	}
	switch f.FieldType.Kind {
	case ipc.FieldEnum:
		choice := strings.TrimSpace(line)
		if n, err := strconv.Atoi(choice); err == nil && n >= 1 && n <= len(f.FieldType.Options) {
			choice = f.FieldType.Options[n-1]
		}
		if !slices.Contains(f.FieldType.Options, choice) {
			return r, fmt.Errorf("answer with a number from 1 to %d", len(f.FieldType.Options))
		}
		r.Value = &choice
	case ipc.FieldArray:
		values := []string{}
		for _, v := range strings.Split(line, ",") {
			if v = strings.TrimSpace(v); v != "" {
				values = append(values, v)
			}
		}
		r.Values = values
	default:
		r.Value = &line
	}
	if err := f.CheckAnswer(r); err != nil {
		return ipc.ElicitResponse{RequestID: id}, err
	}
	return r, nil
}
