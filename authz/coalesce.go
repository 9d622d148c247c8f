package authz

import (
	"sync"
	"time"

	"github.com/phantom-dev/phantom/authz/audit"
)

// Coalescing bounds. A caller that asks in a loop — reads it is allowed
// (an agent polling a tab), or calls that are turned away, refused,
// withdrawn or timed out, which cost it nothing — must not fill the audit
// log, since the log is rotated by size and a flood would push out what
// came before (the commands typed). Such lines are written at most once a
// minute per caller, tool, target, grant and sheet; the next one written
// says how many were left out (Entry.Repeated), and those no later line
// will tell of are counted in the next summary (see Budget). Everything
// that acts, and everything the human does, is written every time.
const (
	coalesceWindow = time.Minute
	coalesceKeys   = 4096 // forgotten beyond this, oldest first (bounded memory)
)

// coalescer decides which repeated lines are left out.
type coalescer struct {
	now func() time.Time
	// lost, when set, is told of lines left out that no later line will
	// count: their key was forgotten, or drained. It must not call the
	// coalescer.
	lost func(countKey, int)

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

// coalescable reports whether e is a line a caller can repeat at will:
// one it causes without the human, but for a sheet raised (each sheet is
// the human's to see, and the sheets bound them) and a run_not_typed or
// keys_not_typed.
func coalescable(e audit.Entry) bool {
	// A run_not_typed line answers one act, which the act budget bounds:
	// each stands by its allowed line.
	return callerDriven(e) && e.Event != audit.SheetRaised && e.Event != audit.RunNotTyped && e.Event != audit.KeysNotTyped
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

// drain hands the lines left out to lost and forgets their keys, for
// the keys whose window is over — or for all when all is set (authz
// stops) — since no later line may come to count them.
func (c *coalescer) drain(all bool) {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, sl := range c.last {
		if all || now.Sub(sl.at) >= coalesceWindow {
			c.drop(k, sl)
		}
	}
}

// drop forgets key k, handing its left-out lines to lost. Called with
// c.mu held.
func (c *coalescer) drop(k coalesceKey, sl *coalesceSlot) {
	delete(c.last, k)
	if sl.skipped > 0 && c.lost != nil {
		c.lost(row(k.client, k.tab, k.event, k.tool), sl.skipped)
	}
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
			c.drop(k, sl)
		}
	}
}
