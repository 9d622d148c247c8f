package attach

import (
	"time"

	"github.com/phantom-dev/phantom/terminald/workspace"
)

// What Phantom knows of an agent, and so what "waiting" and "finished"
// mean (README, Attach):
//
//   - An agent tab is one where an agent's MCP client connected (its
//     agent_state was ever set) or whose foreground program is a
//     configured agent's (config.json's agents).
//   - An agent waits for input when its agent_state went from working (a
//     Phantom tool call in progress, or waiting for a sheet's answer) to
//     idle and stayed idle, with no
//     output in its tab, for WaitingSettle: the call burst is over and its
//     spinner stopped. Once per such change.
//   - An agent finished when its tab's program exited, or when the
//     configured agent's program left the tab's foreground (an agent run
//     from a shell ended) while the tab lives on.

// agentTrack is what the watcher remembers of one tab.
type agentTrack struct {
	agent   bool                 // an agent ran in the tab
	fgAgent bool                 // the foreground program is a configured agent's
	state   workspace.AgentState // the agent_state last seen
	idleAt  time.Time            // when it went from working to idle; zero when not pending
	exited  bool
	name    string // what to call the agent: its client's name or program
	title   string // the tab's title
}

// watcher finds agents waiting and finished from the tabs as they change.
type watcher struct {
	settle  time.Duration
	isAgent func(program string) bool
	tabs    map[string]*agentTrack
}

func newWatcher(settle time.Duration, isAgent func(string) bool) *watcher {
	return &watcher{settle: settle, isAgent: isAgent, tabs: map[string]*agentTrack{}}
}

// observe takes a tab as it is now and returns the calls its change makes.
func (w *watcher) observe(t workspace.Terminal, now time.Time) []Call {
	tr, seen := w.tabs[t.ID]
	if !seen {
		tr = &agentTrack{}
		w.tabs[t.ID] = tr
	}
	fgAgent := !t.Exited && w.isAgent != nil && w.isAgent(t.ForegroundName)
	if t.AgentState != workspace.AgentNone || t.AgentClient != "" || fgAgent {
		tr.agent = true
	}
	switch {
	case t.AgentClient != "":
		tr.name = t.AgentClient
	case fgAgent:
		tr.name = t.ForegroundName
	}
	tr.title = t.Title
	if tr.title == "" {
		tr.title = t.ID
	}
	var calls []Call
	switch {
	case !seen:
		// What was before is not news.
	case t.Exited && !tr.exited && tr.agent:
		calls = append(calls, w.call(CallFinished, t.ID, tr, "finished"))
		tr.idleAt = time.Time{}
	case tr.fgAgent && !fgAgent && !t.Exited:
		calls = append(calls, w.call(CallFinished, t.ID, tr, "finished"))
		tr.idleAt = time.Time{}
	}
	switch {
	case t.AgentState != workspace.AgentIdle:
		tr.idleAt = time.Time{}
	case tr.state == workspace.AgentWorking || tr.state == workspace.AgentWaitingForPermission:
		tr.idleAt = now
	}
	tr.state, tr.exited, tr.fgAgent = t.AgentState, t.Exited, fgAgent
	return calls
}

// forget drops a closed tab.
func (w *watcher) forget(id string) { delete(w.tabs, id) }

// due returns the waiting calls due at now: an agent idle since the end
// of its calls, and its tab quiet, for settle. lastOutput is when a tab
// last drew output.
func (w *watcher) due(now time.Time, lastOutput func(id string) time.Time) []Call {
	var calls []Call
	for id, tr := range w.tabs {
		if tr.idleAt.IsZero() || now.Sub(tr.idleAt) < w.settle {
			continue
		}
		if out := lastOutput(id); !out.IsZero() && now.Sub(out) < w.settle {
			continue // still drawing: not waiting yet
		}
		tr.idleAt = time.Time{}
		calls = append(calls, w.call(CallWaiting, id, tr, "waits for input"))
	}
	return calls
}

// next is how long until a waiting call may be due: settle after the
// earliest pending idle (rechecked then, as output may have pushed it
// on), an hour when none is pending.
func (w *watcher) next(now time.Time) time.Duration {
	wait := time.Hour
	for _, tr := range w.tabs {
		if !tr.idleAt.IsZero() {
			wait = min(wait, max(tr.idleAt.Add(w.settle).Sub(now), w.settle/4))
		}
	}
	return wait
}

// call is the call of kind for tab id: "Phantom: claude waits for input"
// and the tab's title.
func (w *watcher) call(kind CallKind, id string, tr *agentTrack, what string) Call {
	// The agent's name is its own: short, so that what happened survives.
	name := notifyName(tr.name)
	if name == "" {
		name = "the agent"
	}
	return Call{Kind: kind, TabID: id, Title: "Phantom: " + name + " " + what, Body: "tab " + id + ": " + tr.title}
}
