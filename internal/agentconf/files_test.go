package agentconf

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBackupsKeepTheLastFew checks that every change is backed up and that
// only the newest keepBackups backups stay.
func TestBackupsKeepTheLastFew(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	writeFile(t, path, "{}", 0o600)
	var versions []string
	for i := range keepBackups + 3 {
		versions = append(versions, string(readFile(t, path)))
		_, backup, err := editFile(path, userPerms, func(old []byte, _ bool) ([]byte, error) {
			return []byte(`{"n": ` + string(rune('0'+i)) + `}`), nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := string(readFile(t, backup)); got != versions[i] {
			t.Errorf("backup %d holds %q, want %q", i, got, versions[i])
		}
	}
	backups := Backups(path)
	if len(backups) != keepBackups {
		t.Fatalf("%d backups kept, want %d: %v", len(backups), keepBackups, backups)
	}
	for i, b := range backups { // oldest first: the last keepBackups versions
		if got, want := string(readFile(t, b)), versions[len(versions)-keepBackups+i]; got != want {
			t.Errorf("kept backup %s holds %q, want %q", filepath.Base(b), got, want)
		}
	}
}

// TestSymlinkWrittenThrough checks the decision for symlinked files: the
// link stays, its target gets the new text, the backup sits beside the
// link, and the target keeps its mode.
func TestSymlinkWrittenThrough(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "dotfiles", "mcp.json")
	writeFile(t, target, jsonOthers, 0o640)
	link := filepath.Join(dir, "home", ".cursor", "mcp.json")
	os.MkdirAll(filepath.Dir(link), 0o700)
	if err := os.Symlink("../../dotfiles/mcp.json", link); err != nil {
		t.Fatal(err)
	}
	a, _ := Lookup("cursor")
	res, err := Install(Target{Agent: a, File: link}, testLaunch)
	if err != nil || res.Action != Added {
		t.Fatalf("Install through a symlink = %+v, %v", res, err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the symlink was replaced by a file")
	}
	if !strings.Contains(string(readFile(t, target)), `"phantom"`) {
		t.Errorf("the link's target did not get the entry")
	}
	if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o640 {
		t.Errorf("the target's mode became %v", fi.Mode().Perm())
	}
	if filepath.Dir(res.Backup) != filepath.Dir(link) {
		t.Errorf("backup %s is not beside the link", res.Backup)
	}
	if ents, _ := os.ReadDir(filepath.Dir(target)); len(ents) != 1 {
		t.Errorf("files left beside the target: %v", ents)
	}
}

// TestDanglingSymlinkRefused checks that a link to nowhere is not replaced
// by a file or followed into creating one.
func TestDanglingSymlinkRefused(t *testing.T) {
	link := filepath.Join(t.TempDir(), ".mcp.json")
	os.Symlink("/nonexistent/dir/mcp.json", link)
	a, _ := Lookup("claude")
	for _, err := range []error{second(Install(Target{Agent: a, File: link}, testLaunch)), second(Inspect(Target{Agent: a, File: link}, testLaunch))} {
		if err == nil || !strings.Contains(err.Error(), link+": it is a symbolic link to /nonexistent/dir/mcp.json") {
			t.Errorf("dangling link: %v", err)
		}
	}
}

// TestEditStartsOverWhenTheFileChanges checks that a change made while we
// edit (an agent saving its settings) is kept, not overwritten.
func TestEditStartsOverWhenTheFileChanges(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.json")
	writeFile(t, path, `{"a": 1}`, 0o600)
	calls := 0
	_, _, err := editFile(path, userPerms, func(old []byte, _ bool) ([]byte, error) {
		calls++
		if calls == 1 {
			writeFile(t, path, `{"a": 2}`, 0o600) // the agent writes meanwhile
		}
		return append(old[:len(old)-1:len(old)-1], `, "b": 1}`...), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(readFile(t, path)); got != `{"a": 2, "b": 1}` || calls != 2 {
		t.Errorf("after a concurrent change: %q in %d calls", got, calls)
	}
}

// TestUninstallCreatesNothing checks that removing from a missing file
// neither creates it nor its directory.
func TestUninstallCreatesNothing(t *testing.T) {
	e := testEnv(t)
	for _, a := range agents {
		tg := Target{Agent: a, File: a.UserFile(e)}
		if res, err := Uninstall(tg); err != nil || res.Action != Unchanged {
			t.Errorf("%s: Uninstall of a missing file = %+v, %v", a.Name, res, err)
		}
		if _, err := os.Lstat(filepath.Dir(tg.File)); err == nil && filepath.Dir(tg.File) != e.Home {
			t.Errorf("%s: Uninstall created %s", a.Name, filepath.Dir(tg.File))
		}
	}
}
