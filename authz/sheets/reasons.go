package sheets

import (
	"fmt"
	"time"
)

// The reasons below go to the agent as the refusal's message: each says
// what happened and what to do next, in words a model can act on.

// codexNote explains the sheet timeout to a model.
const codexNote = "a sheet times out before agents' own tool-call timeouts, such as Codex's 60 s"

func turnedAway(r Request, ta turnAway, now time.Time) string {
	if ta.withdrew > 0 {
		return fmt.Sprintf("refused without asking: %s; it may ask again at %s (in %s). %s",
			withdrewWhat(r, ta), clockTime(ta.until), ta.until.Sub(now).Round(time.Second), waitNote)
	}
	return fmt.Sprintf("refused without asking: the human denied a request from %s at %s, which turns it away; "+
		"it may ask again at %s (in %s)", r.who(), clockTime(ta.denied), clockTime(ta.until), ta.until.Sub(now).Round(time.Second))
}

// deniedReason tells the agent its call was denied. It names what the
// call acts on by its id (or directory), not the sheet's subject, which
// describes the target tab for the human by its title: the agent may not
// read that tab, and its title may be what its programs wrote.
func deniedReason(p *pending, until time.Time) string {
	what := p.Need.Tool
	if p.Need.Target != "" {
		what += " on " + p.Need.Target
	}
	return fmt.Sprintf("refused: the human denied %s; %s is turned away until %s: do not ask again before then",
		what, p.who(), clockTime(until))
}

func deniedEarlier(r Request, until time.Time) string {
	return fmt.Sprintf("refused without asking: the human denied an earlier request from %s, which turns it away; "+
		"it may ask again at %s", r.who(), clockTime(until))
}

func (q *Queue) timedOut() string {
	return fmt.Sprintf("refused: nobody answered the permission sheet within %s (%s). "+
		"The human did not refuse it: ask again if it is still needed", q.timeout, codexNote)
}

func backlogFull(r Request, limit int) string {
	return fmt.Sprintf("refused without asking: %s already has a permission sheet waiting for the human and %d more requests "+
		"behind it, the most one caller may have; wait for those answers before asking again", r.who(), limit)
}

func queueFull(n int) string {
	return fmt.Sprintf("refused without asking: %d permission requests already wait for the human, the most authz holds; "+
		"ask again later", n)
}

func clockTime(t time.Time) string { return t.Format("15:04:05") }

// waitNote tells a model how to get an answer instead of looping.
const waitNote = "Raising a permission sheet and cancelling it does not get an answer sooner: " +
	"ask once, and wait for the human's answer"

// withdrewWhat says why a caller that withdrew its sheets is turned away.
func withdrewWhat(r Request, ta turnAway) string {
	return fmt.Sprintf("%s withdrew %d permission sheets within %s (it cancelled the call, or closed its connection, "+
		"before the human answered), which turns it away as a denial would", r.who(), ta.withdrew, ta.within)
}

func withdrewEarlier(r Request, ta turnAway) string {
	return fmt.Sprintf("refused without asking: %s; it may ask again at %s. %s", withdrewWhat(r, ta), clockTime(ta.until), waitNote)
}

func withdrewNow(r Request, ta turnAway) string {
	return fmt.Sprintf("%s is turned away until %s", withdrewWhat(r, ta), clockTime(ta.until))
}
