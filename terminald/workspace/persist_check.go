package workspace

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// maxSavedText bounds a saved name, colour or icon.
const maxSavedText = 1024

// parseSession reads a saved session and checks it whole: a file that
// fails any check is not used at all (RestoreSaved sets it aside), so
// that a damaged or hand-edited file never half-restores. The error says
// what is wrong and where, in the file's own terms.
func parseSession(b []byte) (savedState, error) {
	var st savedState
	if err := json.Unmarshal(b, &st); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return savedState{}, fmt.Errorf("not valid JSON at byte %d: %s", se.Offset, strings.TrimPrefix(se.Error(), "json: "))
		case errors.As(err, &te):
			return savedState{}, fmt.Errorf("%s at byte %d must be %s, not %s", te.Field, te.Offset, te.Type, te.Value)
		}
		return savedState{}, fmt.Errorf("not a saved session: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	if st.Version != stateVersion {
		return savedState{}, fmt.Errorf("version %d; this Phantom reads version %d", st.Version, stateVersion)
	}
	if err := checkSession(st); err != nil {
		return savedState{}, err
	}
	return st, nil
}

// checkSession checks the ids, references and sizes of a saved session.
func checkSession(st savedState) error {
	if len(st.Windows) == 0 {
		return errors.New("no window")
	}
	if len(st.Windows) > MaxTabs || len(st.Groups) > MaxTabs || len(st.Tabs) > MaxTabs {
		return fmt.Errorf("%d windows, %d groups and %d tabs: at most %d of each", len(st.Windows), len(st.Groups), len(st.Tabs), MaxTabs)
	}
	for p, n := range st.NextID {
		if n < 0 || n > maxIDNum {
			return fmt.Errorf("next_id %q is %d, not between 0 and %d", p, n, maxIDNum)
		}
	}
	windows := map[string]bool{}
	for i, win := range st.Windows {
		where := fmt.Sprintf("window %d", i+1)
		if err := checkID(where, win.ID, 'w', windows); err != nil {
			return err
		}
		if err := checkText(where+" name", win.Name); err != nil {
			return err
		}
		if len(win.Tabs) > MaxTabs {
			return fmt.Errorf("%s (%s) lists %d tabs, more than %d", where, win.ID, len(win.Tabs), MaxTabs)
		}
		for _, id := range win.Tabs {
			if !validID(id, 't') {
				return fmt.Errorf("%s (%s) lists %q, which is not a tab id", where, win.ID, id)
			}
		}
		if win.Focused != "" && !validID(win.Focused, 't') {
			return fmt.Errorf("%s (%s) focuses %q, which is not a tab id", where, win.ID, win.Focused)
		}
	}
	groups := map[string]string{}
	seen := map[string]bool{}
	for i, g := range st.Groups {
		where := fmt.Sprintf("group %d", i+1)
		if err := checkID(where, g.ID, 'g', seen); err != nil {
			return err
		}
		if !windows[g.WindowID] {
			return fmt.Errorf("%s (%s) is in window %q, which the file does not have", where, g.ID, g.WindowID)
		}
		for _, f := range [][2]string{{"name", g.Name}, {"color", g.Color}} {
			if err := checkText(where+" "+f[0], f[1]); err != nil {
				return err
			}
		}
		groups[g.ID] = g.WindowID
	}
	clear(seen)
	for i, t := range st.Tabs {
		where := fmt.Sprintf("tab %d", i+1)
		if err := checkID(where, t.ID, 't', seen); err != nil {
			return err
		}
		where += " (" + t.ID + ")"
		if !windows[t.WindowID] {
			return fmt.Errorf("%s is in window %q, which the file does not have", where, t.WindowID)
		}
		if w, ok := groups[t.GroupID]; t.GroupID != "" && (!ok || w != t.WindowID) {
			return fmt.Errorf("%s is in group %q, which window %s does not have", where, t.GroupID, t.WindowID)
		}
		for _, f := range [][2]string{{"name", t.Name}, {"icon", t.Icon}, {"color", t.Color}, {"opened_by", t.OpenedBy}} {
			if err := checkText(where+" "+f[0], f[1]); err != nil {
				return err
			}
		}
		for _, f := range [][2]string{{"kernel_dir", t.KernelDir}, {"worktree", t.Worktree}} {
			if err := checkDirText(where+" "+f[0], f[1]); err != nil {
				return err
			}
		}
		if t.Keep != nil {
			if err := checkKept(*t.Keep); err != nil {
				return fmt.Errorf("%s keep: %w", where, err)
			}
		}
	}
	return nil
}

// maxIDNum bounds the number in an id (nine digits).
const maxIDNum = 999_999_999

// validID reports whether id is prefix and a number without leading zero.
func validID(id string, prefix byte) bool {
	if len(id) < 2 || len(id) > 10 || id[0] != prefix || id[1] == '0' {
		return false
	}
	for _, c := range id[1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// checkID checks an id's shape and that it is new in seen, and adds it.
func checkID(where, id string, prefix byte, seen map[string]bool) error {
	if !validID(id, prefix) {
		return fmt.Errorf("%s: id %q is not %c followed by a number", where, id, prefix)
	}
	if seen[id] {
		return fmt.Errorf("%s: id %s comes twice", where, id)
	}
	seen[id] = true
	return nil
}

func checkText(what, s string) error {
	if len(s) > maxSavedText {
		return fmt.Errorf("%s is %d bytes long, more than %d", what, len(s), maxSavedText)
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("%s is not valid UTF-8", what)
	}
	return nil
}

func checkDirText(what, dir string) error {
	if dir == "" {
		return nil
	}
	if err := checkText(what, dir); err != nil {
		return err
	}
	if !filepath.IsAbs(dir) || filepath.Clean(dir) != dir {
		return fmt.Errorf("%s %q is not a clean absolute path", what, dir)
	}
	return nil
}

// checkKept checks a kept command as KeepCommand does when it is marked.
func checkKept(k KeptCommand) error {
	if strings.TrimSpace(k.Line) == "" {
		return errors.New("the command is empty")
	}
	if len(k.Line) > maxKeptCommand {
		return fmt.Errorf("the command is %d bytes long, more than %d", len(k.Line), maxKeptCommand)
	}
	if err := checkCommandLine(k.Line); err != nil {
		return err
	}
	if k.Dir == "" {
		return errors.New("no directory")
	}
	return checkDirText("directory", k.Dir)
}
