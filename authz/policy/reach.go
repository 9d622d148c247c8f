package policy

import (
	"fmt"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/phantom-dev/phantom/internal/errdefs"
)

// sameGroup reports whether tabs a and b count as one group for reach.
//
// The rule against widening: group membership an agent set never widens
// reach. Two tabs count as one group for reach only when the human put
// both there; a tab an agent created in a group or moved into one
// (GroupSetByAgent) is, for reach, in no group at all. So neither moving
// the human's tab into the agent's group, nor moving the agent's own tab
// into the human's group, nor creating tabs in a group, lets a `group`
// grant cover more than the tabs the human grouped. A caller inside
// Phantom but in no tab (it left its tab's process tree) reaches `all`
// for everything.
func sameGroup(a, b TabInfo) bool {
	return a.GroupID != "" && a.GroupID == b.GroupID && !a.GroupSetByAgent && !b.GroupSetByAgent
}

// reachTab is the reach of touching the tab named by the field f: the
// caller's own tab, a tab of its group (see sameGroup), or anything else.
// It also says so in words, for the sheet.
func (e *evaluation) reachTab(f protoreflect.FieldDescriptor) (Scope, TabInfo, string, error) {
	id := e.req.Get(f).String()
	if id == "" {
		return 0, TabInfo{}, "", fmt.Errorf("argument %s is required: %w", f.Name(), errdefs.ErrInvalidArgument)
	}
	t, ok := e.tab(id)
	switch {
	case !ok:
		return 0, TabInfo{}, "", fmt.Errorf("no tab %s (list_terminals lists the tabs): %w", quote(id), errdefs.ErrNotFound)
	case e.self == nil:
		return All, t, e.noTab(), nil
	case t.ID == e.self.ID:
		return Tab, t, "the caller's own tab", nil
	case e.opened(t):
		e.openedTarget = true
		return Tab, t, "a tab this agent opened (it runs in the agent's sandbox, no more privileged than the agent)", nil
	case sameGroup(*e.self, t):
		return Group, t, "a tab of the caller's group", nil
	case e.self.GroupID != "" && t.GroupID == e.self.GroupID:
		return All, t, "a tab counted as outside the caller's group: an agent, not the human, grouped one of the two tabs", nil
	}
	return All, t, "a tab outside the caller's group", nil
}

// reachDir is the reach of touching the project of dir: the caller tab's
// own project, the project of a tab of its group (see sameGroup), or
// anything else; and that in words.
func (e *evaluation) reachDir(dir string) (Scope, string) {
	if e.self == nil {
		return All, e.noTab()
	}
	p := e.projectOf(dir)
	if p == tabProject(*e.self) {
		return Tab, "the caller tab's own project"
	}
	for _, t := range e.tabs {
		if e.opened(t) && tabProject(t) == p {
			return Tab, "the project of a tab this agent opened"
		}
	}
	for _, t := range e.tabs {
		if t.ID != e.self.ID && sameGroup(*e.self, t) && tabProject(t) == p {
			return Group, "the project of a tab of the caller's group"
		}
	}
	return All, "a project no tab of the caller's group works in"
}

// opened reports whether t was opened for the caller's agent: by the
// caller's tab, or by a tab opened for it, and so on. Such tabs run in the
// agent's sandbox (Rules.Within), no more privileged than the agent, so
// they count as its own tab. The walk follows OpenedBy links only while
// they lead to tabs that exist, and no further than there are tabs (so a
// loop ends).
func (e *evaluation) opened(t TabInfo) bool {
	if e.self == nil {
		return false
	}
	by := t.OpenedBy
	for range len(e.tabs) {
		if by == "" {
			return false
		}
		if by == e.self.ID {
			return true
		}
		next, ok := e.tab(by)
		if !ok {
			return false
		}
		by = next.OpenedBy
	}
	return false
}

// noTab says why a caller in no tab reaches all.
func (e *evaluation) noTab() string {
	if e.escaped {
		return "the caller runs inside Phantom but left its tab, so it reaches everything"
	}
	return "the caller runs in no Phantom tab, so it reaches everything"
}
