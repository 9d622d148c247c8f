package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// outer is `phantom attach` running in a real outer terminal: a private
// tmux server (its own socket, no config file) whose only pane runs the
// client. Keys go in with send-keys and the screen is read with
// capture-pane, so a test sees what a human's terminal shows, escape
// sequences parsed by a terminal that is not ours.
type outer struct {
	t    testing.TB
	in   *instance
	sock string // tmux's socket
}

// attachOuter starts `phantom attach args...` in a tmux pane of cols x
// rows (the pane; tmux's own status line is off). extraEnv is added to
// the client's environment.
func (in *instance) attachOuter(t testing.TB, cols, rows int, extraEnv []string, args ...string) *outer {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("tmux is not installed: scripts/setup installs it")
	}
	o := &outer{t: t, in: in, sock: filepath.Join(t.TempDir(), "outer.sock")}
	env := append(slicesClone(in.env.Vars), "TERM=xterm-256color", "COLORTERM=")
	env = append(env, extraEnv...)
	// The pane's command carries the environment itself: a tmux server
	// takes its global environment from the client that started it, but
	// the pane's own is what we pass here, whatever tmux adds.
	argv := []string{"env", "-i"}
	for _, kv := range env {
		if !strings.HasPrefix(kv, "TMUX") {
			argv = append(argv, kv)
		}
	}
	argv = append(argv, phantomBin, "attach")
	argv = append(argv, args...)
	quoted := make([]string, len(argv))
	for i, a := range argv {
		quoted[i] = shellQuote(a)
	}
	cmd := o.command("-f", "/dev/null", "new-session", "-d", "-x", strconv.Itoa(cols), "-y", strconv.Itoa(rows),
		";", "set", "-g", "status", "off",
		";", "set", "-g", "remain-on-exit", "on",
		";", "respawn-pane", "-k", strings.Join(quoted, " "))
	cmd.Env = env
	cmd.Dir = in.env.Home
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	t.Cleanup(func() { o.command("kill-server").Run() })
	return o
}

// command is a tmux command on the outer server.
func (o *outer) command(args ...string) *exec.Cmd {
	return exec.Command("tmux", append([]string{"-S", o.sock}, args...)...)
}

// tmux runs a tmux command on the outer server and returns its output.
func (o *outer) tmux(args ...string) string {
	o.t.Helper()
	out, err := o.command(args...).CombinedOutput()
	if err != nil {
		o.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// keys types tmux key names (`C-\\`, `Enter`, `Up`, `%`) one after the
// other into the client.
func (o *outer) keys(keys ...string) {
	o.t.Helper()
	o.tmux(append([]string{"send-keys", "-t", "0"}, keys...)...)
}

// literal types s as text.
func (o *outer) literal(s string) {
	o.t.Helper()
	o.tmux("send-keys", "-t", "0", "-l", s)
}

// bytes types b exactly, byte for byte.
func (o *outer) bytes(b []byte) {
	o.t.Helper()
	args := []string{"send-keys", "-t", "0", "-H"}
	for _, c := range b {
		args = append(args, fmt.Sprintf("%02x", c))
	}
	o.tmux(args...)
}

// prefix types the default prefix, Ctrl-\, then keys.
func (o *outer) prefix(keys ...string) {
	o.t.Helper()
	o.bytes([]byte{0x1c})
	if len(keys) > 0 {
		o.keys(keys...)
	}
}

// screen is the pane's text, a line per row, trailing blanks cut.
func (o *outer) screen() string {
	o.t.Helper()
	out, err := o.command("capture-pane", "-p", "-t", "0").Output()
	if err != nil {
		o.t.Fatalf("tmux capture-pane: %v", err)
	}
	return strings.TrimRight(string(out), "\n")
}

// styled is the pane's text with its attributes as escape sequences
// (capture-pane -e), to check colours.
func (o *outer) styled() string {
	o.t.Helper()
	out, err := o.command("capture-pane", "-p", "-e", "-t", "0").Output()
	if err != nil {
		o.t.Fatalf("tmux capture-pane -e: %v", err)
	}
	return string(out)
}

// status is the client's last row: attach's status line.
func (o *outer) status() string {
	lines := strings.Split(o.screen(), "\n")
	rows, _ := strconv.Atoi(strings.TrimSpace(o.tmux("display-message", "-p", "-t", "0", "#{pane_height}")))
	if rows > 0 && len(lines) < rows {
		return "" // capture-pane cuts trailing blank rows
	}
	return lines[len(lines)-1]
}

// waitFor polls until cond holds on the screen.
func (o *outer) waitFor(what string, cond func(screen string) bool) {
	o.t.Helper()
	eventually(o.t, what, func() (bool, string) {
		s := o.screen()
		return cond(s), "the outer terminal shows:\n" + s
	})
}

// waitText waits for s on the screen.
func (o *outer) waitText(s string) {
	o.t.Helper()
	o.waitFor(fmt.Sprintf("%q on the outer terminal", s), func(screen string) bool { return strings.Contains(screen, s) })
}

// resize makes the pane cols x rows (the client gets SIGWINCH).
func (o *outer) resize(cols, rows int) {
	o.t.Helper()
	o.tmux("resize-window", "-t", "0", "-x", strconv.Itoa(cols), "-y", strconv.Itoa(rows))
}

// exited reports whether the client ended, and its exit status.
func (o *outer) exited() (bool, int) {
	o.t.Helper()
	out := strings.Fields(o.tmux("display-message", "-p", "-t", "0", "#{pane_dead} #{pane_dead_status}"))
	if len(out) == 0 || out[0] != "1" {
		return false, 0
	}
	st := 0
	if len(out) > 1 {
		st, _ = strconv.Atoi(out[1])
	}
	return true, st
}

// TestOuterTerminal checks the harness itself: attach draws its status
// line in tmux, keys reach the tab, and detach ends the client.
func TestOuterTerminal(t *testing.T) {
	in := startPhantom(t)
	o := in.attachOuter(t, 80, 24, nil)
	o.waitFor("the status line", func(string) bool { return strings.Contains(o.status(), "1") })
	o.literal("echo outer-$((6*7))")
	o.keys("Enter")
	o.waitText("outer-42")
	o.prefix("d")
	eventually(t, "attach to end on detach", func() (bool, string) {
		done, st := o.exited()
		return done && st == 0, o.screen()
	})
}
