package workspace

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/internal/errdefs"
)

// TestRunCommandCancelsAContinuation, in real bash, zsh and fish tabs: a
// line that the lexer before typing cannot see is incomplete (an alias or
// abbreviation that opens a block) leaves the shell waiting for more;
// run_command presses Ctrl-C, refuses with the continuation error, and
// the human's next line runs on its own. A long command and a short one
// still run, by run_command and by RunAndWait.
func TestRunCommandCancelsAContinuation(t *testing.T) {
	for _, tc := range []struct{ sh, define string }{
		{"bash", "alias zz='for i in 1; do'"},
		{"zsh", "alias zz='for i in 1; do'"},
		{"fish", "abbr -a zz 'for i in 1'"},
	} {
		t.Run(tc.sh, func(t *testing.T) {
			t.Parallel()
			w, id, dir := shellTab(t, tc.sh)
			typeIn(t, w, id, tc.define+"\r")
			waitTab(t, w, id, "the prompt after the definition", func(tm Terminal, _ string) bool { return tm.Idle })
			var err error
			for range 50 { // until the keys typed settled
				if _, err = w.RunCommand(id, "zz"); err == nil || !strings.Contains(err.Error(), "empty command line") {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			switch {
			case err == nil:
				t.Fatal("run_command of a line the shell continued returned no error")
			case !errors.Is(err, errdefs.ErrFailedPrecondition) || !strings.Contains(err.Error(), "held the line open for more"):
				t.Fatalf("run_command zz: %v, want the continuation error", err)
			}
			var nt *NotTyped
			if !errors.As(err, &nt) {
				t.Errorf("run_command zz: %T, want NotTyped (nothing ran: the audit log says so)", err)
			}
			screen := waitTab(t, w, id, "the prompt back", func(tm Terminal, _ string) bool { return tm.Idle })
			if last := strings.TrimSpace(screen[strings.LastIndex(screen, "\n")+1:]); strings.HasSuffix(last, ">") {
				t.Fatalf("the shell still waits for more:\n%s", screen)
			}
			marker := filepath.Join(dir, "MARK")
			typeIn(t, w, id, "touch "+marker+"\r")
			waitTab(t, w, id, "the human's line to run on its own", func(tm Terminal, _ string) bool {
				_, err := os.Stat(marker)
				return tm.Idle && err == nil
			})

			runWhenEmpty(t, w, id, "sleep 2")
			waitTab(t, w, id, "sleep to end", func(tm Terminal, _ string) bool { return tm.Idle })
			c, err := w.RunAndWait(context.Background(), id, "echo hi", 30*time.Second)
			if err != nil || !c.Finished || c.Text != "echo hi" {
				t.Fatalf("RunAndWait echo hi: %+v, %v", c, err)
			}
			c, err = w.RunAndWait(context.Background(), id, "zz", 30*time.Second)
			if err == nil || !strings.Contains(err.Error(), "held the line open for more") {
				t.Fatalf("RunAndWait zz: %+v, %v, want the continuation error", c, err)
			}
		})
	}
}
