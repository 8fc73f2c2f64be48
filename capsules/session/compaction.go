package session

import (
	"fmt"

	"github.com/astrid-go/astrid/sdk"
)

// MaxSummaryBytes bounds a compaction's summary.
const MaxSummaryBytes = 256 << 10

// Compaction is what stands for a session's older messages in what the
// agent sends a model: Summary replaces Messages[:Upto]. The messages stay
// in the record; only the agent's view of them is shortened.
type Compaction struct {
	Summary string `json:"summary"`
	// Upto is how many of the record's first messages Summary covers.
	Upto int `json:"upto"`
	// AtMs is when it was made (host clock, milliseconds).
	AtMs int64 `json:"at_ms,omitempty"`
}

// validate checks c against a record of n messages.
func (c Compaction) validate(n int) error {
	switch {
	case c.Summary == "":
		return fmt.Errorf("compaction: the summary is empty")
	case len(c.Summary) > MaxSummaryBytes:
		return fmt.Errorf("compaction: the summary is %d bytes, the limit is %d", len(c.Summary), MaxSummaryBytes)
	case c.Upto < 1 || c.Upto > n:
		return fmt.Errorf("compaction: upto %d is outside the session's 1..%d messages", c.Upto, n)
	}
	return nil
}

// setCompaction records comp as session id's compaction (its messages are
// kept). It is applied after any append of the same request.
func setCompaction(c *sdk.Call, id string, comp Compaction) error {
	r, found, err := loadFound(c, id)
	if err != nil {
		return err
	}
	if !found {
		return fmt.Errorf("compaction: session %q has no messages", id)
	}
	if err := comp.validate(len(r.Messages)); err != nil {
		return err
	}
	comp.AtMs = c.Now().UnixMilli()
	r.Compaction = &comp
	if err := save(c, id, r); err != nil {
		return err
	}
	announce(c, EventUpdated, id)
	return nil
}

// currentCompaction is r's compaction when it still fits its messages
// (nil otherwise, or when it has none).
func currentCompaction(r Record) *Compaction {
	if r.Compaction == nil || r.Compaction.validate(len(r.Messages)) != nil {
		return nil
	}
	return r.Compaction
}
