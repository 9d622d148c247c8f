package authz

import (
	"sync"
	"time"

	"github.com/phantom-dev/phantom/authz/audit"
)

// Coalescing bounds. A caller that asks in a loop — reads it is allowed
// (an agent polling a tab), or calls that are turned away or refused at
// once, which cost it nothing — must not fill the audit log, since the
// log is rotated by size and a flood would push out what came before
// (the commands typed). Such lines are written at most once a minute per
// caller, tool, target and grant; the next one written says how many
// were left out. Everything that acts, and everything the human does, is
// written every time.
const (
	coalesceWindow = time.Minute
	coalesceKeys   = 4096 // forgotten beyond this, oldest first (bounded memory)
)

// coalescer decides which repeated lines are left out.
type coalescer struct {
	now func() time.Time

	mu   sync.Mutex
	last map[coalesceKey]*coalesceSlot
}

type coalesceKey struct {
	event, client, connection, tab, tool, capability, target, grant, sheet string
}

type coalesceSlot struct {
	at      time.Time // when the last line for the key was written
	skipped int
}

func newCoalescer(now func() time.Time) *coalescer {
	return &coalescer{now: now, last: map[coalesceKey]*coalesceSlot{}}
}

// coalescable reports whether e is a line a caller can repeat at will.
func coalescable(e audit.Entry) bool {
	switch e.Event {
	case audit.TurnedAway, audit.Refused:
		return true
	case audit.FocusMoved, audit.FocusNotice, audit.FocusNoClient:
		return true // focus_terminal is free: an agent may call it in a loop
	case audit.Allowed:
		return e.Capability == "read" && e.Command == ""
	}
	return false
}

// admit reports whether e is to be written; when it is, after others
// like it were left out, it says how many (Entry.Repeated).
func (c *coalescer) admit(e *audit.Entry) bool {
	if !coalescable(*e) {
		return true
	}
	k := coalesceKey{e.Event, e.Client, e.Connection, e.Tab, e.Tool, e.Capability, e.Target, e.Grant, e.Sheet}
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if sl, ok := c.last[k]; ok && now.Sub(sl.at) < coalesceWindow {
		sl.skipped++
		return false
	}
	if sl, ok := c.last[k]; ok {
		e.Repeated = sl.skipped
	}
	if len(c.last) >= coalesceKeys {
		c.forget(now)
	}
	c.last[k] = &coalesceSlot{at: now}
	return true
}

// forget drops the keys whose window is over, and if that is not enough
// the oldest half. Called with c.mu held.
func (c *coalescer) forget(now time.Time) {
	for k, sl := range c.last {
		if now.Sub(sl.at) >= coalesceWindow && sl.skipped == 0 {
			delete(c.last, k)
		}
	}
	if len(c.last) < coalesceKeys {
		return
	}
	var oldest time.Time
	for _, sl := range c.last {
		if oldest.IsZero() || sl.at.Before(oldest) {
			oldest = sl.at
		}
	}
	cut := oldest.Add(now.Sub(oldest) / 2)
	for k, sl := range c.last {
		if !sl.at.After(cut) {
			delete(c.last, k)
		}
	}
}
