package workspace

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/internal/config"
	"github.com/phantom-dev/phantom/internal/errdefs"
	"github.com/phantom-dev/phantom/internal/testenv"
)

// shellTab opens a tab running shell (with Phantom's integration) in a
// workspace of its own and waits for its prompt.
func shellTab(t *testing.T, shell string) (*Workspace, string, string) {
	t.Helper()
	path, err := exec.LookPath(shell)
	if err != nil {
		t.Skipf("%s not installed", shell)
	}
	env := testenv.New(t)
	// No zsh-newuser-install menu in a home without .zshrc.
	if err := os.WriteFile(filepath.Join(env.Home, ".zshrc"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(env.Layout.Config)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Shell = path
	w, err := New(Options{Config: cfg, Layout: env.Layout, Env: env.Vars, PollInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Shutdown)
	dir := t.TempDir()
	tm, err := w.Create(CreateSpec{Directory: dir})
	if err != nil {
		t.Fatal(err)
	}
	waitTab(t, w, tm.ID, "the first prompt", func(tm Terminal, _ string) bool { return tm.Idle })
	return w, tm.ID, dir
}

// waitTab waits until ok holds for the tab and its screen.
func waitTab(t *testing.T, w *Workspace, id, what string, ok func(Terminal, string) bool) string {
	t.Helper()
	var screen string
	testenv.Eventually(t, what, func() (bool, string) {
		tm, err := w.Get(id)
		if err != nil {
			t.Fatal(err)
		}
		lines, _ := w.ReadOutput(id, 30)
		screen = strings.Join(lines, "\n")
		return ok(tm, screen), screen
	})
	return screen
}

// refusedLine fails unless err is run_command's refusal of a command
// line that is not empty, without secret in it.
func refusedLine(t *testing.T, err error, secret, what string) {
	t.Helper()
	switch {
	case err == nil:
		t.Fatalf("%s: run_command typed into a command line that was not empty", what)
	case !errors.Is(err, errdefs.ErrFailedPrecondition) || !strings.Contains(err.Error(), "empty command line"):
		t.Fatalf("%s: %v, want the refusal of a command line that is not empty", what, err)
	case strings.Contains(err.Error(), secret):
		t.Fatalf("%s: the refusal quotes the human's text: %v", what, err)
	}
}

// runWhenEmpty runs line once the tab takes it; a refusal for the line
// is retried, as an agent would after "try again in a moment".
func runWhenEmpty(t *testing.T, w *Workspace, id, line string) {
	t.Helper()
	testenv.Eventually(t, "run_command to take "+line, func() (bool, string) {
		_, err := w.RunCommand(id, line)
		return err == nil, fmt.Sprint(err)
	})
}

// typeIn types keys into tab id as the human's keyboard.
func typeIn(t *testing.T, w *Workspace, id, keys string) {
	t.Helper()
	if err := w.Input(id, []byte(keys)); err != nil {
		t.Fatal(err)
	}
}

// clearAndRun types keys that clear the line, then runs touch marker once
// the tab takes it, and waits for the marker and the prompt.
func clearAndRun(t *testing.T, w *Workspace, id, keys, marker string) {
	t.Helper()
	typeIn(t, w, id, keys)
	runWhenEmpty(t, w, id, "touch "+marker)
	waitTab(t, w, id, "the marker and the prompt back", func(tm Terminal, _ string) bool {
		_, err := os.Stat(marker)
		return tm.Idle && err == nil
	})
}

// TestRunCommandOnlyIntoAnEmptyLine, in real bash, zsh and fish tabs:
// run_command refuses a command line holding the human's half-typed
// text — at once, before the shell echoed it, and after — leaves that
// text on the line and runs nothing; once the human erased it, the
// command runs and the command log has what the shell ran. Keys typed
// right before run_command are never joined; an arrow key, a paste and
// an unfinished quoted line keep it out too; keys typed into less do
// not, once less ended.
func TestRunCommandOnlyIntoAnEmptyLine(t *testing.T) {
	for _, sh := range []string{"bash", "zsh", "fish"} {
		t.Run(sh, func(t *testing.T) {
			t.Parallel()
			w, id, dir := shellTab(t, sh)
			scratch := filepath.Join(dir, "scratch")
			if err := os.Mkdir(scratch, 0o700); err != nil {
				t.Fatal(err)
			}
			marker := filepath.Join(dir, "ran")
			half := "rm -rf " + scratch
			if err := w.Input(id, []byte(half)); err != nil {
				t.Fatal(err)
			}
			// At once: the keys are in flight, not on screen yet.
			_, err := w.RunCommand(id, "touch "+marker)
			refusedLine(t, err, scratch, "keys in flight")
			waitTab(t, w, id, "the half-typed line", func(_ Terminal, s string) bool { return strings.Contains(s, half) })
			_, err = w.RunCommand(id, "touch "+marker)
			refusedLine(t, err, scratch, "keys echoed")
			time.Sleep(2 * lineSettle) // settled: still refused
			_, err = w.RunCommand(id, "touch "+marker)
			refusedLine(t, err, scratch, "keys settled")
			if s := waitTab(t, w, id, "the line", func(Terminal, string) bool { return true }); !strings.Contains(s, half) || strings.Contains(s, "touch") {
				t.Fatalf("the human's line was changed:\n%s", s)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Fatal("the refused command ran")
			}
			if _, err := os.Stat(scratch); err != nil {
				t.Fatalf("the human's half-typed line ran: %v", err)
			}

			// The human erases it.
			if err := w.Input(id, bytes.Repeat([]byte{0x7f}, len(half))); err != nil {
				t.Fatal(err)
			}
			runWhenEmpty(t, w, id, "touch "+marker)
			testenv.Eventually(t, "the marker", func() (bool, string) {
				c, ok, _ := w.LastCommand(id)
				_, err := os.Stat(marker)
				return err == nil && ok && c.Text == "touch "+marker, c.Text
			})
			if c, _, _ := w.LastCommand(id); !c.Reported || c.Typed != "touch "+marker {
				t.Errorf("last command %+v: want the shell's own report of the typed line", c)
			}
			if _, err := os.Stat(scratch); err != nil {
				t.Fatalf("the human's erased line ran: %v", err)
			}
			waitTab(t, w, id, "the prompt back", func(tm Terminal, _ string) bool { return tm.Idle })

			// A key typed right before run_command is never joined.
			typeIn(t, w, id, "x")
			_, err = w.RunCommand(id, "touch "+marker+"-race")
			refusedLine(t, err, "x", "a key typed just before")
			clearAndRun(t, w, id, "\x7f", marker+"-2")
			if _, err := os.Stat(marker + "-race"); err == nil {
				t.Fatal("the refused command ran")
			}

			// Up recalls a line: refused; Ctrl-C discards it.
			typeIn(t, w, id, "\x1b[A")
			waitTab(t, w, id, "the recalled line", func(_ Terminal, s string) bool {
				lines := strings.Split(s, "\n")
				return strings.Contains(lines[len(lines)-1], "-2")
			})
			_, err = w.RunCommand(id, "touch "+marker+"-3")
			refusedLine(t, err, "touch", "a recalled line")
			clearAndRun(t, w, id, "\x03", marker+"-3")

			// An unfinished quoted line, entered: the shell waits for the
			// rest of it.
			typeIn(t, w, id, "echo 'unfinished-quote\r")
			if sh != "fish" { // fish keeps it on its own line, as text typed
				waitTab(t, w, id, "the continuation prompt", func(_ Terminal, s string) bool { return strings.HasSuffix(strings.TrimSpace(s), ">") })
			}
			time.Sleep(2 * lineSettle)
			_, err = w.RunCommand(id, "touch "+marker+"-4")
			refusedLine(t, err, "unfinished-quote", "a continued line")
			clearAndRun(t, w, id, "\x03", marker+"-4")

			// A line erased with Ctrl-U: gone once the prompt settled.
			typeIn(t, w, id, "echo secret-text")
			waitTab(t, w, id, "the typed line", func(_ Terminal, s string) bool { return strings.Contains(s, "secret-text") })
			clearAndRun(t, w, id, "\x15", marker+"-6")

			// Keys typed into less are less's.
			file := filepath.Join(dir, "notes.txt")
			if err := os.WriteFile(file, []byte(strings.Repeat("a line of notes\n", 100)), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := exec.LookPath("less"); err == nil {
				runWhenEmpty(t, w, id, "less "+file)
				waitTab(t, w, id, "less", func(tm Terminal, s string) bool {
					return tm.ForegroundName == "less" && strings.Contains(s, "a line of notes")
				})
				clearAndRun(t, w, id, "jj\x1b[Bq", marker+"-5")
			}
		})
	}
}

// TestRunCommandWithoutIntegration: in a sh tab Phantom cannot see the
// command line, so it follows the keys alone: a half-typed line keeps
// run_command out until the human enters or discards it.
func TestRunCommandWithoutIntegration(t *testing.T) {
	w, _, dir := shellTab(t, "bash")
	tm, err := w.Create(CreateSpec{Directory: dir, Command: []string{"sh", "-i"}})
	if err != nil {
		t.Fatal(err)
	}
	id := tm.ID
	waitTab(t, w, id, "sh's prompt", func(tm Terminal, _ string) bool { return tm.Idle })
	marker := filepath.Join(dir, "ran")
	if err := w.Input(id, []byte("echo half")); err != nil {
		t.Fatal(err)
	}
	waitTab(t, w, id, "the half-typed line", func(_ Terminal, s string) bool { return strings.Contains(s, "echo half") })
	time.Sleep(2 * lineSettle)
	_, err = w.RunCommand(id, "touch "+marker)
	refusedLine(t, err, "echo half", "sh, half-typed")
	if err := w.Input(id, []byte{3}); err != nil { // Ctrl-C discards it
		t.Fatal(err)
	}
	runWhenEmpty(t, w, id, "touch "+marker)
	testenv.Eventually(t, "the marker", func() (bool, string) {
		_, err := os.Stat(marker)
		return err == nil, ""
	})
	if s := waitTab(t, w, id, "the screen", func(Terminal, string) bool { return true }); strings.Contains(s, "halftouch") {
		t.Errorf("joined:\n%s", s)
	}
}
