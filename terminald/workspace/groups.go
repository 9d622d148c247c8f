package workspace

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Group is a tab group as callers see it.
type Group struct {
	ID, Name, Color, WindowID string
	TabIDs                    []string
}

// groupsLocked returns the groups in id order.
func (w *Workspace) groupsLocked() []*groupEntry {
	out := make([]*groupEntry, 0, len(w.groups))
	for _, g := range w.groups {
		out = append(out, g)
	}
	slices.SortFunc(out, func(a, b *groupEntry) int { return idNum(a.id) - idNum(b.id) })
	return out
}

func idNum(id string) int {
	n, _ := strconv.Atoi(id[1:])
	return n
}

func (w *Workspace) groupInfoLocked(g *groupEntry) Group {
	info := Group{ID: g.id, Name: g.name, Color: g.color, WindowID: g.windowID}
	win, _ := w.windowLocked(g.windowID)
	for _, id := range win.tabs {
		if w.tabs[id].groupID == g.id {
			info.TabIDs = append(info.TabIDs, id)
		}
	}
	return info
}

// Groups lists every group.
func (w *Workspace) Groups() []Group {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []Group
	for _, g := range w.groupsLocked() {
		out = append(out, w.groupInfoLocked(g))
	}
	return out
}

// CreateGroup makes a group; with no colour it takes the palette's next.
func (w *Workspace) CreateGroup(name, color, windowID string) (Group, error) {
	if strings.TrimSpace(name) == "" {
		return Group{}, invalid("name", "must not be blank")
	}
	if err := checkColor("color", color); err != nil {
		return Group{}, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	win, err := w.windowLocked(windowID)
	if err != nil {
		return Group{}, err
	}
	g := &groupEntry{id: w.newID('g'), name: name, color: color, windowID: win.id}
	if g.color == "" {
		g.color = Palette[(idNum(g.id)-1)%len(Palette)].Name
	}
	w.groups[g.id] = g
	return w.groupInfoLocked(g), nil
}

// UpdateGroup renames or recolours a group; nil fields stay.
func (w *Workspace) UpdateGroup(id string, name, color *string) (Group, error) {
	if name != nil && strings.TrimSpace(*name) == "" {
		return Group{}, invalid("name", "must not be blank")
	}
	if color != nil {
		if err := checkColor("color", *color); err != nil {
			return Group{}, err
		}
	}
	w.mu.Lock()
	g, ok := w.groups[id]
	if !ok {
		w.mu.Unlock()
		return Group{}, notFound("group", id)
	}
	if name != nil {
		g.name = *name
	}
	if color != nil {
		g.color = *color
	}
	info := w.groupInfoLocked(g)
	var tabs []Terminal
	for _, tid := range info.TabIDs {
		tabs = append(tabs, w.infoLocked(w.tabs[tid]))
	}
	w.mu.Unlock()
	for _, t := range tabs {
		w.publish(Event{Kind: EventUpdated, Terminal: t})
	}
	return info, nil
}

// MoveToGroup puts a tab into a group of its window, or out of any group
// when groupID is "". byAgent records that an agent, not the human, moved
// it.
func (w *Workspace) MoveToGroup(tabID, groupID string, byAgent bool) (Terminal, error) {
	w.mu.Lock()
	e, err := w.tabLocked(tabID)
	if err != nil {
		w.mu.Unlock()
		return Terminal{}, err
	}
	if groupID != "" {
		g, ok := w.groups[groupID]
		if !ok {
			w.mu.Unlock()
			return Terminal{}, notFound("group", groupID)
		}
		if g.windowID != e.windowID {
			w.mu.Unlock()
			return Terminal{}, invalid("group_id", fmt.Sprintf("group %s is in window %s; tab %s is in window %s", g.id, g.windowID, e.id, e.windowID))
		}
	}
	e.groupID = groupID
	e.groupByAgent = byAgent && groupID != ""
	info := w.infoLocked(e)
	w.mu.Unlock()
	w.publish(Event{Kind: EventUpdated, Terminal: info})
	return info, nil
}
