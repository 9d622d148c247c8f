package main

// Naming tabs, windows and groups on the command line. Every command that
// takes one resolves it here, so that they all accept the same forms:
//
//	t3, w1, g2     an id, as phantom ls shows it; ids win over names
//	build          a tab's name (else its title), or a window's name
//	2              entry 2 on attach's status line of the current window
//	               (its focused pane's tab, as tmux's -t :2 is window 2's
//	               active pane): the window of the tab the command runs
//	               in, or the only window
//	1.2            the second pane of entry 1 (tmux's :1.2)
//	main:2         entry 2 of window main (or w1:2); main:1.2 its pane
//	main:build     the tab called build in window main
//
// A window where a tab is wanted means its focused tab, as in tmux. A name
// that fits several is an error listing them: nothing is guessed.

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// withTab runs call against terminald on the tab arg names.
func withTab(arg string, call func(ctx context.Context, tc terminalv1.TerminalServiceClient, tab string) error) error {
	return withTargets(arg, func(ctx context.Context, tc terminalv1.TerminalServiceClient, _ *targets, tab string) error {
		return call(ctx, tc, tab)
	})
}

// withTargets is withTab for calls that name tabs again (r.Describe).
func withTargets(arg string, call func(ctx context.Context, tc terminalv1.TerminalServiceClient, r *targets, tab string) error) error {
	return withTargetsWaiting(arg, 0, call)
}

// withTargetsWaiting is withTargets for a call that may wait up to wait on
// its own (see withDaemonWaiting).
func withTargetsWaiting(arg string, wait time.Duration, call func(ctx context.Context, tc terminalv1.TerminalServiceClient, r *targets, tab string) error) error {
	return withDaemonWaiting("terminald", wait, terminalv1.NewTerminalServiceClient, func(ctx context.Context, tc terminalv1.TerminalServiceClient) error {
		r := newTargets(ctx, tc)
		tab, err := r.Tab(arg)
		if err != nil {
			return err
		}
		return call(ctx, tc, r, tab)
	})
}

// attachTarget resolves attach's TAB|WINDOW argument to an id.
func attachTarget(arg string) (id string, err error) {
	err = withTerminald(func(ctx context.Context, tc terminalv1.TerminalServiceClient) error {
		id, err = newTargets(ctx, tc).TabOrWindow(arg)
		return err
	})
	return id, err
}

// targets resolves names against the tabs and windows, listing each from
// terminald once, on first need.
type targets struct {
	ctx     context.Context
	tc      terminalv1.TerminalServiceClient
	tabs    []*terminalv1.Terminal
	windows []*terminalv1.Window
	// entries are each window's status-line entries, by window id.
	entries map[string][]*terminalv1.StatusEntry
	// idsOnly is true inside a Phantom tab, where windows go by id: their
	// names are the human's (ListWindows is refused there).
	idsOnly bool
}

func newTargets(ctx context.Context, tc terminalv1.TerminalServiceClient) *targets {
	return &targets{ctx: ctx, tc: tc}
}

// isID reports whether s has the shape of an id with prefix p ("t3" for
// 't'): such arguments go to terminald as they are, with no listing first.
func isID(s string, p byte) bool {
	if len(s) < 2 || s[0] != p {
		return false
	}
	for i := 1; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Tab resolves arg to a tab id.
func (r *targets) Tab(arg string) (string, error) {
	switch {
	case isID(arg, 't'):
		return arg, nil
	case arg == "":
		return "", usageError("no tab given", "name a tab by id, name or position (phantom ls lists them)")
	case strings.Contains(arg, ":") || isPosition(arg):
		return r.placed(arg)
	}
	ids, w, err := r.named(arg)
	switch {
	case err != nil:
		return "", err
	case w != nil: // a window stands for its focused tab
		return r.focusedTab(w)
	}
	return r.one(arg, ids)
}

// TabOrWindow resolves arg for attach to a tab id (which attach focuses)
// or a window id, whichever it names.
func (r *targets) TabOrWindow(arg string) (string, error) {
	switch {
	case isID(arg, 't') || isID(arg, 'w'):
		return arg, nil
	case strings.Contains(arg, ":") || isPosition(arg):
		return r.placed(arg)
	}
	ids, w, err := r.named(arg)
	switch {
	case err != nil:
		return "", err
	case w != nil:
		return w.GetId(), nil
	}
	return r.one(arg, ids)
}

// placed resolves a position ("2") or a tab in a window ("main:2",
// "main:build").
func (r *targets) placed(arg string) (string, error) {
	if win, what, ok := strings.Cut(arg, ":"); ok {
		w, err := r.Window(win)
		if err != nil {
			return "", err
		}
		return r.tabIn(w, what, arg)
	}
	w, err := r.currentWindow(arg)
	if err != nil {
		return "", err
	}
	return r.tabIn(w, arg, arg)
}

// named finds what a plain name calls: the tabs given that name, else the
// window of that name, else the tabs showing it as their title. It fails
// when nothing is called so.
func (r *targets) named(arg string) ([]string, *terminalv1.Window, error) {
	byName, byTitle, err := r.tabsNamed(arg, "")
	if err != nil || len(byName) > 0 {
		return byName, nil, err
	}
	w, err := r.windowNamed(arg)
	if err != nil || w != nil {
		return nil, w, err
	}
	if len(byTitle) == 0 {
		return nil, nil, notFoundError(fmt.Sprintf("no tab or window is called %q", arg), "phantom ls lists the tabs, phantom window ls the windows")
	}
	return byTitle, nil, nil
}

func isNumber(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil
}

// isPosition reports whether s is a position: an entry's number ("2"),
// or an entry's and a pane's ("1.2").
func isPosition(s string) bool {
	e, p, ok := strings.Cut(s, ".")
	return isNumber(e) && (!ok || isNumber(p))
}

// Window resolves arg, an id or a name, to a window.
func (r *targets) Window(arg string) (*terminalv1.Window, error) {
	w, err := r.windowNamed(arg)
	if err != nil {
		return nil, err
	}
	if w == nil && r.idsOnly {
		return nil, notFoundError(fmt.Sprintf("window %q not found", arg), "inside a Phantom tab, windows go by id (w1), as phantom ls shows")
	}
	if w == nil {
		return nil, notFoundError(fmt.Sprintf("window %q not found", arg), "phantom window ls lists the windows")
	}
	return w, nil
}

// GroupLabels returns how to show each group, by id: its name (control
// characters escaped: an agent may have chosen it), with the id beside it
// when another group has that name too ("api (g2)"); nil when the groups
// cannot be listed, so that callers show ids.
func (r *targets) GroupLabels() map[string]string {
	resp, err := r.tc.ListGroups(r.ctx, &terminalv1.ListGroupsRequest{})
	if err != nil {
		return nil
	}
	count := map[string]int{}
	for _, g := range resp.GetGroups() {
		count[g.GetName()]++
	}
	labels := map[string]string{}
	for _, g := range resp.GetGroups() {
		switch name := printable(g.GetName()); {
		case name == "":
		case count[g.GetName()] > 1:
			labels[g.GetId()] = name + " (" + g.GetId() + ")"
		default:
			labels[g.GetId()] = name
		}
	}
	return labels
}

// Group resolves arg, an id or a name, to a group id.
func (r *targets) Group(arg string) (string, error) {
	if isID(arg, 'g') {
		return arg, nil
	}
	resp, err := r.tc.ListGroups(r.ctx, &terminalv1.ListGroupsRequest{})
	if err != nil {
		return "", rpcError(err)
	}
	var ids []string
	for _, g := range resp.GetGroups() {
		if g.GetName() == arg {
			ids = append(ids, g.GetId())
		}
	}
	switch len(ids) {
	case 0:
		return "", notFoundError(fmt.Sprintf("group %q not found", arg), "phantom group ls lists the groups")
	case 1:
		return ids[0], nil
	}
	return "", usageError(fmt.Sprintf("%q names %d groups: %s", arg, len(ids), strings.Join(ids, ", ")), "name one by its id")
}

// Label is how attach's status line shows tab id: "main:2"; "" when the
// tab is not listed.
func (r *targets) Label(id string) string {
	places, err := r.Places()
	if err != nil {
		return ""
	}
	return places[id]
}

// Describe names tab for messages: "t3 (main:2)", or "t3" when it is
// not listed.
func (r *targets) Describe(id string) string {
	if l := r.Label(id); l != "" {
		return id + " (" + l + ")"
	}
	return id
}

// Places returns where attach's status line shows each tab, by id:
// "main:2" for entry 2 of window main, "main:1.2" for the second pane
// of entry 1.
func (r *targets) Places() (map[string]string, error) {
	if err := r.list(); err != nil {
		return nil, err
	}
	places := make(map[string]string, len(r.tabs))
	for _, w := range r.windows {
		for i, e := range r.entries[w.GetId()] {
			ids := e.GetTerminalIds()
			for j, id := range ids {
				place := r.windowName(w.GetId()) + ":" + strconv.Itoa(i+1)
				if len(ids) > 1 {
					place += "." + strconv.Itoa(j+1)
				}
				places[id] = place
			}
		}
	}
	return places, nil
}

// list lists the tabs and windows once.
func (r *targets) list() error {
	if r.windows != nil {
		return nil
	}
	ts, err := r.tc.ListTerminals(r.ctx, &terminalv1.ListTerminalsRequest{})
	if err != nil {
		return rpcError(err)
	}
	r.tabs = ts.GetTerminals()
	ws, err := r.tc.ListWindows(r.ctx, &terminalv1.ListWindowsRequest{})
	switch {
	case status.Code(err) == codes.PermissionDenied:
		// Inside a tab: windows' names are the human's, as for agents.
		// Their ids and order come with the tabs.
		r.windows, r.idsOnly = windowsOf(r.tabs), true
	case err != nil:
		return rpcError(err)
	default:
		r.windows = ws.GetWindows()
	}
	return r.listEntries()
}

// listEntries lists the windows' status-line entries, which positions
// count. A terminald from before entries lists none: each tab is an
// entry of its own there, as its status line shows.
func (r *targets) listEntries() error {
	r.entries = map[string][]*terminalv1.StatusEntry{}
	resp, err := r.tc.ListEntries(r.ctx, &terminalv1.ListEntriesRequest{})
	switch {
	case status.Code(err) == codes.Unimplemented, status.Code(err) == codes.PermissionDenied:
		for _, t := range r.tabs {
			w := t.GetWindowId()
			r.entries[w] = append(r.entries[w], &terminalv1.StatusEntry{TerminalIds: []string{t.GetId()}, FocusedTerminalId: t.GetId()})
		}
		return nil
	case err != nil:
		return rpcError(err)
	}
	for _, we := range resp.GetWindows() {
		r.entries[we.GetWindowId()] = we.GetEntries()
	}
	return nil
}

// windowsOf are the windows the tabs are in, by id only, in tab order.
func windowsOf(tabs []*terminalv1.Terminal) []*terminalv1.Window {
	var out []*terminalv1.Window
	byID := map[string]*terminalv1.Window{}
	for _, t := range tabs {
		w := byID[t.GetWindowId()]
		if w == nil {
			w = &terminalv1.Window{Id: t.GetWindowId()}
			byID[w.Id] = w
			out = append(out, w)
		}
		w.TerminalIds = append(w.TerminalIds, t.GetId())
		if t.GetFocused() {
			w.FocusedTerminalId = t.GetId()
		}
	}
	return out
}

func (r *targets) windowOf(tab string) string {
	for _, t := range r.tabs {
		if t.GetId() == tab {
			return t.GetWindowId()
		}
	}
	return ""
}

func (r *targets) windowName(id string) string {
	for _, w := range r.windows {
		if w.GetId() == id && w.GetName() != "" {
			return w.GetName()
		}
	}
	return id
}

// windowNamed is the window with id or name arg; nil when none.
func (r *targets) windowNamed(arg string) (*terminalv1.Window, error) {
	if err := r.list(); err != nil {
		return nil, err
	}
	var found []*terminalv1.Window
	for _, w := range r.windows {
		if w.GetId() == arg {
			return w, nil
		}
		if w.GetName() == arg {
			found = append(found, w)
		}
	}
	switch len(found) {
	case 0:
		return nil, nil
	case 1:
		return found[0], nil
	}
	ids := make([]string, len(found))
	for i, w := range found {
		ids[i] = w.GetId()
	}
	return nil, usageError(fmt.Sprintf("%q names %d windows: %s", arg, len(found), strings.Join(ids, ", ")), "name one by its id")
}

// currentWindow is the window a bare position counts in: the window of
// the tab the command runs in, else the only window, else the only window
// that has a tab at that position (an empty window, or one with fewer
// tabs, does not make the position ambiguous). Several that have it are
// ambiguous: the error names each.
func (r *targets) currentWindow(arg string) (*terminalv1.Window, error) {
	if err := r.list(); err != nil {
		return nil, err
	}
	if w := r.windowOf(os.Getenv("PHANTOM_TAB_ID")); w != "" {
		return r.Window(w)
	}
	if len(r.windows) == 1 {
		return r.windows[0], nil
	}
	if len(r.windows) == 0 {
		return nil, notFoundError("there are no windows", "open a tab with phantom new")
	}
	var having []*terminalv1.Window
	for _, w := range r.windows {
		// The position counted as tabIn counts it, so that both agree.
		if _, err := r.tabIn(w, arg, arg); err == nil {
			having = append(having, w)
		}
	}
	switch len(having) {
	case 0:
		return nil, notFoundError(fmt.Sprintf("no window has a tab %s", arg), "phantom ls lists the tabs")
	case 1:
		return having[0], nil
	}
	names := make([]string, len(having))
	for i, w := range having {
		names[i] = r.windowName(w.GetId()) + ":" + arg
	}
	return nil, usageError(fmt.Sprintf("tab %s is ambiguous: %d windows have one", arg, len(having)),
		"say which: "+strings.Join(names, " or "))
}

// tabIn resolves what, a position or a tab name, within window w.
func (r *targets) tabIn(w *terminalv1.Window, what, arg string) (string, error) {
	if isPosition(what) {
		return r.position(w, what)
	}
	if isID(what, 't') {
		return what, nil
	}
	ids, byTitle, err := r.tabsNamed(what, w.GetId())
	if err != nil {
		return "", err
	}
	if len(ids) == 0 {
		ids = byTitle
	}
	if len(ids) == 0 {
		return "", notFoundError(fmt.Sprintf("window %s has no tab called %q", r.windowName(w.GetId()), what), "phantom ls lists the tabs")
	}
	return r.one(arg, ids)
}

// position resolves what, "2" or "1.2", within window w: entry 2's
// focused pane's tab, the second pane of entry 1.
func (r *targets) position(w *terminalv1.Window, what string) (string, error) {
	if err := r.list(); err != nil {
		return "", err
	}
	es := r.entries[w.GetId()]
	ent, pane, isPane := strings.Cut(what, ".")
	n, _ := strconv.Atoi(ent)
	name := r.windowName(w.GetId())
	if n < 1 || n > len(es) {
		return "", notFoundError(fmt.Sprintf("window %s shows %s on its status line, so no %d", name,
			plural(len(es), "1 entry", fmt.Sprintf("%d entries", len(es))), n), "phantom ls lists the tabs and their places")
	}
	e := es[n-1]
	if !isPane {
		return e.GetFocusedTerminalId(), nil
	}
	ids := e.GetTerminalIds()
	p, _ := strconv.Atoi(pane)
	if p < 1 || p > len(ids) {
		return "", notFoundError(fmt.Sprintf("entry %d of window %s has %s, so no pane %d", n, name,
			plural(len(ids), "1 pane", fmt.Sprintf("%d panes", len(ids))), p), "phantom ls lists the tabs and their places")
	}
	return ids[p-1], nil
}

// tabsNamed are the tabs called name (in window win when set): by the
// name given them, and by their title.
func (r *targets) tabsNamed(name, win string) (byName, byTitle []string, err error) {
	if err := r.list(); err != nil {
		return nil, nil, err
	}
	for _, t := range r.tabs {
		if win != "" && t.GetWindowId() != win {
			continue
		}
		switch name {
		case t.GetName():
			byName = append(byName, t.GetId())
		case t.GetTitle():
			byTitle = append(byTitle, t.GetId())
		}
	}
	return byName, byTitle, nil
}

func (r *targets) focusedTab(w *terminalv1.Window) (string, error) {
	if id := w.GetFocusedTerminalId(); id != "" {
		return id, nil
	}
	return "", notFoundError(fmt.Sprintf("window %s has no tabs", r.windowName(w.GetId())), "open one with phantom new --window "+w.GetId())
}

// one is the single tab in ids, or an error listing them.
func (r *targets) one(arg string, ids []string) (string, error) {
	if len(ids) == 1 {
		return ids[0], nil
	}
	c := make([]string, len(ids))
	for i, id := range ids {
		c[i] = r.Describe(id)
	}
	return "", usageError(fmt.Sprintf("%q names %d tabs: %s", arg, len(ids), strings.Join(c, ", ")), "name one by its id or position")
}
