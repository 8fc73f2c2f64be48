package undo

import (
	"encoding/json"
	"fmt"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// Request is session.v1.request.undo's payload. Turn 0 is the latest turn
// not undone yet; otherwise the number Reply.Turn names.
type Request struct {
	SessionID     string `json:"session_id"`
	Turn          int    `json:"turn,omitempty"`
	CorrelationID string `json:"correlation_id"`
	// List asks for the turns kept instead (Reply.Kept); nothing is undone.
	List bool `json:"list,omitempty"`
}

// Kept is one turn an undo could take.
type Kept struct {
	Turn   int      `json:"turn"`
	Files  []string `json:"files"`
	Shell  bool     `json:"shell,omitempty"`
	Undone bool     `json:"undone,omitempty"`
}

// Reply is the answer: what was done to each file the turn changed.
type Reply struct {
	CorrelationID string `json:"correlation_id"`
	// Turn is the number of the turn undone among the session's turns
	// that changed files (1 the first kept), Turns how many are kept.
	Turn  int          `json:"turn"`
	Turns int          `json:"turns"`
	Files []FileResult `json:"files"`
	// Shell: the turn ran shell commands, whose changes are not undone.
	Shell bool   `json:"shell,omitempty"`
	Error string `json:"error,omitempty"`
	// Kept answers a List request, oldest first.
	Kept []Kept `json:"kept,omitempty"`
}

// FileResult is one file's undo.
type FileResult struct {
	Path     string `json:"path"`
	Restored bool   `json:"restored"`
	// What says what was done, or why not.
	What string `json:"what"`
}

// handleUndo restores the files a turn changed, each to what it was before
// the turn, unless it changed since.
func handleUndo(c *sdk.Call) error {
	var req Request
	if err := json.Unmarshal(c.Payload(), &req); err != nil || req.CorrelationID == "" {
		c.Log(hostapi.LogWarn, "undo: dropped a request that is not {session_id, turn, correlation_id}")
		return nil
	}
	topic := ipc.SessionResponseTopic("undo", req.CorrelationID)
	reply, err := undo(c, req)
	if err != nil {
		reply = Reply{Error: err.Error()}
	}
	reply.CorrelationID = req.CorrelationID
	return c.PublishJSON(topic, reply)
}

func undo(c *sdk.Call, req Request) (Reply, error) {
	if !ipc.ValidSessionID(req.SessionID) {
		return Reply{}, fmt.Errorf("undo: %q is not a session id", req.SessionID)
	}
	all, err := turns(c, req.SessionID)
	if err != nil {
		return Reply{}, err
	}
	if req.List {
		out := Reply{Turns: len(all), Kept: []Kept{}}
		for _, r := range all {
			k := Kept{Turn: r.Seq, Shell: r.Shell, Undone: r.Undone, Files: []string{}}
			for _, f := range r.Files {
				k.Files = append(k.Files, f.Path)
			}
			out.Kept = append(out.Kept, k)
		}
		return out, nil
	}
	var r *turnRecord
	for i := len(all) - 1; i >= 0; i-- {
		if req.Turn == 0 && !all[i].Undone && len(all[i].Files) > 0 || req.Turn != 0 && all[i].Seq == req.Turn {
			r = &all[i]
			break
		}
	}
	switch {
	case r == nil && req.Turn != 0:
		return Reply{}, fmt.Errorf("undo: session %q keeps no turn %d (it keeps the last %d turns that changed files%s)", req.SessionID, req.Turn, MaxTurns, seqs(all))
	case r == nil:
		return Reply{}, fmt.Errorf("undo: session %q has no turn left to undo: no file its turns changed with write_file, replace_in_file, delete_file or move_file is kept%s", req.SessionID, shellNote(all))
	case r.Undone:
		return Reply{}, fmt.Errorf("undo: turn %d of session %q was undone already", r.Seq, req.SessionID)
	case len(r.Files) == 0:
		return Reply{}, fmt.Errorf("undo: turn %d of session %q changed no file through the fs tools (it ran shell commands, whose changes cannot be undone)", r.Seq, req.SessionID)
	}
	out := Reply{Turn: r.Seq, Turns: len(all), Shell: r.Shell}
	for i := len(r.Files) - 1; i >= 0; i-- {
		out.Files = append(out.Files, restore(c, req.SessionID, r.Files[i]))
	}
	r.Undone = true
	if err := saveTurn(c, req.SessionID, *r); err != nil {
		return Reply{}, err
	}
	return out, nil
}

// restore puts one file back, or says why not.
func restore(c *sdk.Call, session string, f fileRecord) FileResult {
	res := FileResult{Path: f.Path}
	now, size, _, err := state(c, f.Path)
	switch {
	case err != nil:
		res.What = fmt.Sprintf("not restored: it cannot be read now: %v", err)
		return res
	case now == f.Before:
		res.What = "unchanged: it is as it was before the turn"
		return res
	case now == dir:
		res.What = "not restored: it is a directory now (replaced since the turn); nothing was touched"
		return res
	case f.Before == tooLarge:
		res.What = fmt.Sprintf("not restored: its prior content (%d bytes) was not kept (at most %d KiB a file, %d MiB a session)", f.Size, MaxFileBytes>>10, MaxSessionBytes>>20)
		return res
	case f.Before == unknown || f.Before == dir:
		res.What = "not restored: what it was before the turn is not known"
		return res
	case now == absent && f.After != absent:
		// Deleted since the turn: putting it back loses nothing.
	case now != f.After:
		res.What = fmt.Sprintf("not restored: it changed since the turn (now %s, the turn left %s); undo it by hand or not at all", describe(now, size), describeState(f.After))
		return res
	}
	if f.Before == absent {
		if err := c.FSRemove(f.Path); err != nil {
			res.What = fmt.Sprintf("not removed: %v", err)
			return res
		}
		res.Restored, res.What = true, "removed: the turn created it"
		return res
	}
	data, ok, err := c.KVGet(blobPrefix + session + "/" + f.Before)
	if err != nil || !ok {
		res.What = fmt.Sprintf("not restored: its kept content is gone (%v)", err)
		return res
	}
	if err := c.FSWrite(f.Path, data); err != nil {
		res.What = fmt.Sprintf("not restored: %v", err)
		return res
	}
	res.Restored = true
	res.What = fmt.Sprintf("restored (%d bytes)", len(data))
	if now == absent {
		res.What += "; it had been deleted since the turn"
	}
	return res
}

func describe(st string, size int64) string {
	if isHash(st) {
		return fmt.Sprintf("%d bytes", size)
	}
	return describeState(st)
}

func describeState(st string) string {
	switch {
	case isHash(st):
		return "other content"
	case st == absent:
		return "no file"
	case st == dir:
		return "a directory"
	case st == tooLarge:
		return "a file too large to compare"
	}
	return "unknown"
}

func seqs(all []turnRecord) string {
	if len(all) == 0 {
		return ""
	}
	return fmt.Sprintf("; kept: %d to %d", all[0].Seq, all[len(all)-1].Seq)
}

func shellNote(all []turnRecord) string {
	for _, r := range all {
		if r.Shell {
			return "; changes made by shell commands are out of undo's reach"
		}
	}
	return ""
}
