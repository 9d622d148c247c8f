package workspace

import "slices"

// A window holds entries in order, as a tmux session holds windows: the
// entries are what attach's status line lists and numbers 1..n, and what
// the CLI's positions count ("phantom read 2", "main:2"). Each entry has
// its own layout, a tree of panes (layout.go), each pane one tab (tmux's
// pane); every tab of the window is in exactly one entry, and a tab in no
// split is an entry of its own with one pane. To agents tabs stay tabs:
// entries are the human's view only.
//
// The window's focused tab is its focused entry's focused pane. The
// entries are kept with the window, for every client of it and for the
// next terminald (the state blob), and always read against the window's
// tabs: a tab that closed or left the window leaves its entry (an entry
// without panes goes), and a tab the window gained in no entry (opened by
// the CLI or an agent, moved in from another window) is a new entry at the
// end.

// Entry is one entry of a window's status line (tmux's window).
type Entry struct {
	// Root is the entry's tree of panes: a leaf for an entry of one tab.
	Root *LayoutNode `json:"root"`
	// Focused is the tab of the entry's focused pane, which the status
	// line shows for the entry and the window focuses on coming back.
	Focused string `json:"focused,omitempty"`
	// Zoomed says the focused pane fills the window; only with several
	// panes.
	Zoomed bool `json:"zoomed,omitempty"`
}

// Tabs lists the entry's tabs in pane order (left to right, top to
// bottom).
func (e Entry) Tabs() []string { return e.Root.Tabs(nil) }

// Equal reports whether e and o show the same panes the same way.
func (e Entry) Equal(o Entry) bool {
	return e.Focused == o.Focused && e.Zoomed == o.Zoomed && e.Root.Equal(o.Root)
}

// EntryOf is the index of the entry in es that holds tab; -1 when none
// does.
func EntryOf(es []Entry, tab string) int {
	return slices.IndexFunc(es, func(e Entry) bool { return slices.Contains(e.Tabs(), tab) })
}

// EntryLeaf is an entry of one pane showing tab.
func EntryLeaf(tab string) Entry { return Entry{Root: &LayoutNode{Tab: tab}, Focused: tab} }

// normEntries is es brought in line with a window whose tabs are tabs (in
// order) and whose focused tab is focused: tabs not in the window leave
// their entries, a tab in two places stays in the first, entries without
// panes go, tabs in no entry are entries of their own at the end (in the
// window's order); each entry's focused pane is one of its own (its
// first, when not), the focused tab's entry focuses it, and only an entry
// of several panes is zoomed. The result shares no node with es.
func normEntries(es []Entry, tabs []string, focused string) []Entry {
	in := make(map[string]bool, len(tabs))
	for _, t := range tabs {
		in[t] = true
	}
	seen := map[string]bool{}
	out := make([]Entry, 0, len(tabs))
	for _, e := range es {
		root := e.Root.keep(func(t string) bool { return in[t] }, seen)
		if root == nil {
			continue
		}
		n := Entry{Root: root, Focused: e.Focused, Zoomed: e.Zoomed && root.Tab == ""}
		if ts := root.Tabs(nil); !slices.Contains(ts, n.Focused) {
			n.Focused = ts[0]
		}
		out = append(out, n)
	}
	for _, t := range tabs {
		if !seen[t] {
			seen[t] = true
			out = append(out, EntryLeaf(t))
		}
	}
	if i := EntryOf(out, focused); i >= 0 {
		out[i].Focused = focused
	}
	return out
}

// entriesFromLayout turns the single layout of a window in a state blob
// of an older terminald into entries: the layout's tabs one entry, where
// its first tab stood among the window's tabs, every other tab an entry of
// its own.
func entriesFromLayout(tabs []string, l *savedLayout) []Entry {
	if l == nil || l.Root == nil {
		return nil
	}
	shown := l.Root.Tabs(nil)
	var out []Entry
	placed := false
	for _, t := range tabs {
		switch {
		case !slices.Contains(shown, t):
			out = append(out, EntryLeaf(t))
		case !placed:
			placed = true
			out = append(out, Entry{Root: l.Root, Zoomed: l.Zoomed})
		}
	}
	return out
}

// savedLayout is a window's one layout as terminalds before entries kept
// it in the state blob ("layout"); read, never written.
type savedLayout struct {
	Root   *LayoutNode `json:"root,omitempty"`
	Zoomed bool        `json:"zoomed,omitempty"`
}

// entryStore holds the windows' entries, guarded by Workspace.mu.
type entryStore struct {
	m       map[string][]Entry // by window id
	changed chan struct{}      // closed and replaced at each SetEntries that changed them
}

// watchLocked is the current change signal.
func (es *entryStore) watchLocked() chan struct{} {
	if es.changed == nil {
		es.changed = make(chan struct{})
	}
	return es.changed
}

// entriesLocked is window win's entries brought in line with its tabs and
// focus (normEntries), and stored so; the caller may change what it gets.
func (w *Workspace) entriesLocked(win *windowEntry) []Entry {
	es := normEntries(w.entries.m[win.id], win.tabs, win.focused)
	if w.entries.m == nil {
		w.entries.m = map[string][]Entry{}
	}
	w.entries.m[win.id] = es
	return normEntries(es, win.tabs, win.focused) // a copy of its own
}

// Entries returns window id's entries in status-line order (none for no
// such window) and a channel closed at the next SetEntries that changes
// any window's entries. A tab opened or closed, or the window's focus
// moving, closes no channel: the workspace's events say so, and the
// entries read after them follow.
func (w *Workspace) Entries(id string) ([]Entry, <-chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	ch := w.entries.watchLocked()
	win, err := w.windowLocked(id)
	if err != nil {
		return nil, ch
	}
	return w.entriesLocked(win), ch
}

// SetEntries stores window id's entries, for every client of the window
// and for the next terminald. They are brought in line with the window's
// tabs first (see Entries): a tab missing from es is an entry of its own
// at the end, a tab es holds twice stays where it comes first. The
// window's focused tab stays: to show another entry, focus one of its
// tabs (Focus).
func (w *Workspace) SetEntries(id string, es []Entry) {
	w.mu.Lock()
	win, err := w.windowLocked(id)
	if err != nil {
		w.mu.Unlock()
		return
	}
	old := w.entriesLocked(win)
	es = normEntries(es, win.tabs, win.focused)
	changed := !slices.EqualFunc(old, es, Entry.Equal)
	if changed {
		w.entries.m[id] = es
		close(w.entries.watchLocked())
		w.entries.changed = nil
	}
	w.mu.Unlock()
	if changed {
		w.requestSave()
	}
}

// focusAfterCloseLocked is the tab window win focuses when its focused
// tab id, at index i of its tabs, closes (win.tabs no longer holds it):
// the pane beside it when its entry has others, as in tmux, else the next
// entry's focused pane (the previous one's for the last entry).
func (w *Workspace) focusAfterCloseLocked(win *windowEntry, id string, i int) string {
	if len(win.tabs) == 0 {
		return ""
	}
	es := normEntries(w.entries.m[win.id], append(slices.Clone(win.tabs), id), id)
	if k := EntryOf(es, id); k >= 0 {
		if next := es[k].Root.sibling(id); next != "" {
			return next
		}
		switch {
		case k+1 < len(es):
			return es[k+1].Focused
		case k > 0:
			return es[k-1].Focused
		}
	}
	return win.tabs[min(i, len(win.tabs)-1)]
}

// PlaceEntry returns es with e at index i: in place of es[i], or before
// it when insert is set (at the end when i is past it); e's tabs leave
// every other entry, and entries left without panes go. es is not
// changed.
func PlaceEntry(es []Entry, i int, e Entry, insert bool) []Entry {
	tabs := e.Tabs()
	mine := func(t string) bool { return !slices.Contains(tabs, t) }
	out := make([]Entry, 0, len(es)+1)
	for j, o := range es {
		if j == i {
			out = append(out, e)
			if !insert {
				continue
			}
		}
		root := o.Root.keep(mine, map[string]bool{})
		if root == nil {
			continue
		}
		o.Root = root
		if ts := root.Tabs(nil); !slices.Contains(ts, o.Focused) {
			o.Focused = ts[0]
		}
		o.Zoomed = o.Zoomed && root.Tab == ""
		out = append(out, o)
	}
	if i >= len(es) || i < 0 {
		out = append(out, e)
	}
	return out
}
