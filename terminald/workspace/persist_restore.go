package workspace

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/phantom-dev/phantom/terminald/screen"
)

// RestoreReport says what RestoreSaved brought back.
type RestoreReport struct {
	// File is the saved session's path.
	File string
	// Tabs and Windows count what came back; zero when nothing was
	// restored.
	Tabs, Windows int
	// Reran lists the kept commands typed again, one line each:
	// "t3 (build): make watch".
	Reran []string
	// Warnings say, one line each, what could not be restored and why: a
	// file set aside, a tab left out.
	Warnings []string
}

// RestoreSaved restores the session saved on disk into a workspace that
// has no tab yet (`phantom up` after a down or a reboot): the windows in
// order with their names, layouts and focus, the groups, and each tab
// with its id, name, group and directory — a new shell there. A tab
// opened for an agent is left out; a sandboxed tab comes back as a
// sandboxed shell whose rules are no wider than those saved; a command
// the human marked (KeepCommand) is typed at the new shell's first
// prompt, in the directory it was marked in. A file that cannot be used
// is renamed aside and named in a warning; nothing is restored from it.
//
// Only the first call does anything, and only on a workspace that did not
// take tabs back from a holder and has none: then, and in every case
// after it, the workspace saves its own session.
func (w *Workspace) RestoreSaved() RestoreReport {
	path := SessionPath(w.opts.Layout)
	rep := RestoreReport{File: path}
	p := &w.persist
	if p.restored.Swap(true) {
		return rep
	}
	defer func() {
		p.armed.Store(true)
		w.requestSave()
	}()
	w.mu.Lock()
	busy := len(w.tabs) > 0
	w.mu.Unlock()
	if path == "" || busy || p.armed.Load() || !w.Config().RestoreEnabled() {
		return rep
	}
	st, ok, err := loadSession(path)
	if err != nil {
		msg := fmt.Sprintf("the saved session %s cannot be used: %v", path, err)
		if bad, rerr := setAside(path, time.Now()); rerr == nil {
			msg += "; kept it as " + bad + " and started fresh"
		} else {
			msg += fmt.Sprintf("; started fresh (it could not be renamed aside: %v)", rerr)
		}
		w.opts.Logger.Warn(msg)
		rep.Warnings = append(rep.Warnings, msg)
		return rep
	}
	if !ok {
		return rep
	}
	reruns := w.restoreSaved(st, &rep)
	for _, r := range reruns {
		go w.rerun(r.id, r.line)
	}
	w.opts.Logger.Info("restored the saved session", "file", path, "tabs", rep.Tabs, "windows", rep.Windows,
		"reran", len(rep.Reran), "warnings", len(rep.Warnings))
	return rep
}

type rerun struct{ id, line string }

// restoreSaved does RestoreSaved's work on a checked session and returns
// the commands to type again.
func (w *Workspace) restoreSaved(st savedState, rep *RestoreReport) []rerun {
	w.mu.Lock()
	if len(w.tabs) > 0 {
		w.mu.Unlock()
		return nil
	}
	order, focus := map[string][]string{}, map[string]string{}
	for _, sw := range st.Windows {
		order[sw.ID], focus[sw.ID] = slices.Clone(sw.Tabs), sw.Focused
	}
	w.takePlacesLocked(st)
	// The saved entries, kept aside: while Create adds the tabs back one
	// by one, a read of the entries (a save, a client) would drop those
	// not back yet.
	entries := maps.Clone(w.entries.m)
	for _, win := range w.windows {
		win.tabs, win.focused = nil, "" // Create adds them back
	}
	for _, t := range st.Tabs {
		// Tabs opened meanwhile get ids after every saved one.
		w.nextID['t'] = max(w.nextID['t'], idNum(t.ID))
	}
	w.mu.Unlock()

	home := envValue(w.opts.Env, "HOME")
	var reruns []rerun
	for _, t := range st.Tabs {
		label := t.ID
		if t.Name != "" {
			label += " (" + t.Name + ")"
		}
		if t.OpenedBy != "" {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s is not restored: it was opened for the agent of tab %s", label, t.OpenedBy))
			continue
		}
		dir, keep := t.KernelDir, t.Keep
		if keep != nil {
			if checkDir(keep.Dir) == nil {
				dir = keep.Dir
			} else {
				rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s: its command is not run again: its directory %s is gone", label, keep.Dir))
				keep = nil
			}
		}
		if dir == "" || checkDir(dir) != nil {
			if dir != "" {
				rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s: its directory %s is gone; it opens in your home directory", label, dir))
			}
			dir = home
		}
		spec := CreateSpec{id: t.ID, Directory: dir, Name: t.Name, GroupID: t.GroupID, WindowID: t.WindowID}
		if t.Sandboxed {
			// Computed afresh for its directory, and never wider than
			// what it had: rules that do not parse are the tightest.
			rules := restoredRules(t.Sandbox)
			spec.Sandbox, spec.Within = true, &rules
		}
		info, err := w.Create(spec)
		if err != nil {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s is not restored: %v", label, err))
			continue
		}
		w.mu.Lock()
		if e, ok := w.tabs[info.ID]; ok {
			e.icon, e.color, e.keep = t.Icon, t.Color, t.Keep
			// Whoever set them before: an agent's name or group stays
			// an agent's (it never widens a grant's reach).
			e.nameByAgent = t.NameByAgent && t.Name != ""
			e.groupByAgent = t.GroupByAgent && t.GroupID != ""
			if t.Worktree != "" && checkDir(t.Worktree) == nil {
				e.worktree = t.Worktree
			}
		}
		w.mu.Unlock()
		rep.Tabs++
		if keep != nil {
			reruns = append(reruns, rerun{id: info.ID, line: keep.Line})
			rep.Reran = append(rep.Reran, label+": "+keep.Line)
		}
	}

	w.mu.Lock()
	for _, win := range w.windows {
		// The saved order first; tabs opened meanwhile after it.
		win.tabs = append(order[win.id], win.tabs...)
		win.focused = focus[win.id]
	}
	for id, es := range entries {
		w.entries.m[id] = es // tabs that did not come back are left out when read
	}
	close(w.entries.watchLocked())
	w.entries.changed = nil
	w.pruneWindowsLocked()
	var events []Event
	for _, e := range w.tabs {
		if ev, changed := e.observe(w.infoLocked(e)); changed {
			events = append(events, ev)
		}
	}
	rep.Windows = len(w.windows)
	w.mu.Unlock()
	for _, ev := range events {
		w.publish(ev)
	}
	return reruns
}

// rerun types a kept command into a restored tab once its shell waits at
// its prompt (or after rerunWait, for a shell that never says so).
func (w *Workspace) rerun(id, line string) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-w.stopPoll:
			cancel()
		case <-ctx.Done():
		}
	}()
	if _, _, err := w.WaitFor(ctx, id, screen.Pos{}, true, nil, rerunWait); err != nil {
		w.opts.Logger.Warn("kept command not run again", "tab", id, "err", err)
		return
	}
	if _, err := w.RunCommand(id, line); err != nil {
		w.opts.Logger.Warn("kept command not run again", "tab", id, "command", line, "err", err)
		return
	}
	w.opts.Logger.Info("kept command run again", "tab", id, "command", line)
}

// KeepCommand marks the command line the human wants run again in tab id
// when the session is restored, recorded now with the directory the tab
// is in (its shell's, as the kernel has it); an empty line removes the
// mark. It returns the mark as it is now (nil: none) and as it was.
// Only the human's CLI may call it (terminald refuses processes inside
// Phantom): an agent must not get a command of its choosing run as the
// human at the next `phantom up`.
func (w *Workspace) KeepCommand(id, line string) (now, before *KeptCommand, err error) {
	w.mu.Lock()
	e, err := w.tabLocked(id)
	if err != nil {
		w.mu.Unlock()
		return nil, nil, err
	}
	before = e.keep
	openedBy, editor := e.openedBy, e.last.Editor
	w.mu.Unlock()
	if line == "" {
		now = nil
	} else {
		switch {
		case openedBy != "":
			return nil, before, invalid("terminal_id", fmt.Sprintf("tab %s was opened for the agent of tab %s: such tabs are not restored, so it keeps no command", id, openedBy))
		case editor:
			return nil, before, invalid("terminal_id", fmt.Sprintf("tab %s runs the window's editor, which is not restored", id))
		}
		e.lastMu.Lock()
		dir := e.projectAt
		if dir == "" {
			dir = e.tab.projectOf
		}
		e.lastMu.Unlock()
		if dir == "" {
			dir = e.snapshot().kernelDir
		}
		k := KeptCommand{Line: strings.TrimSpace(line), Dir: dir}
		if err := checkKept(k); err != nil {
			return nil, before, invalid("command", err.Error())
		}
		now = &k
	}
	w.mu.Lock()
	if cur, ok := w.tabs[id]; ok && cur == e {
		e.keep = now
		ev, changed := e.observe(w.infoLocked(e))
		w.mu.Unlock()
		if changed {
			w.publish(ev)
		}
	} else {
		w.mu.Unlock()
		return nil, before, notFound("tab", id)
	}
	w.requestSave()
	return now, before, nil
}

// KeptCommandOf is tab id's kept command; nil when none.
func (w *Workspace) KeptCommandOf(id string) (*KeptCommand, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	e, err := w.tabLocked(id)
	if err != nil {
		return nil, err
	}
	return e.keep, nil
}
