package main

import (
	"strings"
	"testing"
)

// TestAdversarialSendKeysAround: the ways around `phantom send`'s sheet an
// agent with a shell would try, each from its own real tab (a denial
// turns a tab away for a while without a sheet, which would prove
// nothing): SendKeys and CloseTerminal over grpcurl straight to
// terminald, and the CLI (send, close) from a new session with Phantom's
// variables cleared. Each still raises a send_keys sheet spelling the
// keys or a close_terminal sheet saying the tab closes; denied, it is
// refused and the human's shell is unchanged and still open. Renaming a window over grpcurl is refused
// outright and the name stays.
func TestAdversarialSendKeysAround(t *testing.T) {
	env := adversaryUp(t)
	grpcurl := grpcurlPath(t)
	human, before := settledShell(t, env)
	terminald := env.Layout.DaemonSocket("terminald")

	setsid := "setsid env -u PHANTOM_TAB_ID -u PHANTOM_MCP_SOCKET "
	for _, c := range []struct{ name, tool, cmd, subject string }{
		{"grpcurl SendKeys", "send_keys", shellCmd("timeout", "60", grpcurl, "-plaintext", "-unix", "-d",
			`{"terminal_id":"`+human+`","keys":["echo pwned","Enter"]}`, terminald, "phantom.terminal.v1.TerminalService/SendKeys"), "echo pwned␍"},
		{"phantom send after setsid and env -u", "send_keys", setsid + shellCmd(phantomBin, "send", human, "echo pwned", "Enter"), "echo pwned␍"},
		{"grpcurl CloseTerminal", "close_terminal", shellCmd("timeout", "60", grpcurl, "-plaintext", "-unix", "-d",
			`{"terminal_id":"`+human+`"}`, terminald, "phantom.terminal.v1.TerminalService/CloseTerminal"), "close tab " + human},
		{"phantom close after setsid and env -u", "close_terminal", setsid + shellCmd(phantomBin, "close", human), "close tab " + human},
	} {
		a := newAttacker(t, env, "attacker")
		j := a.start(c.cmd)
		s := asksHuman(t, env, j, a.tab, c.tool, c.name)
		if subject, _ := s["subject"].(string); !strings.Contains(subject, c.subject) {
			t.Errorf("%s: the sheet does not say %q:\n%v", c.name, c.subject, s)
		}
		deny(t, env, s)
		if r := j.wait(); !refused(r) {
			t.Errorf("%s from tab %s, denied: want a refusal, got %v", c.name, a.tab, r)
		}
		unchangedOutput(t, env, human, before, c.name)
		if tabByID(tabs(t, env), human) == nil {
			t.Fatalf("%s, denied, closed the human's tab", c.name)
		}
	}

	a := newAttacker(t, env, "renamer")
	r := a.run(shellCmd("timeout", "10", grpcurl, "-plaintext", "-unix", "-d", `{"window_id":"w1","name":"evil"}`,
		terminald, "phantom.terminal.v1.TerminalService/UpdateWindow"))
	if !refused(r) {
		t.Errorf("grpcurl UpdateWindow from tab %s: want a refusal, got %v", a.tab, r)
	}
	if out := mustPhantom(t, env, "window", "ls"); strings.Contains(out, "evil") {
		t.Errorf("after the refused UpdateWindow, the windows are:\n%s", out)
	}
}
