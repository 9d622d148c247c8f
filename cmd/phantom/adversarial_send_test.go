package main

import (
	"strings"
	"testing"
)

// TestAdversarialSendKeysAround: the ways around `phantom send`'s sheet an
// agent with a shell would try, each from its own real tab (a denial
// turns a tab away for a while without a sheet, which would prove
// nothing): SendKeys over grpcurl straight to terminald, and the CLI from
// a new session with Phantom's variables cleared. Each still raises a
// send_keys sheet spelling the keys; denied, it is refused and the
// human's shell is unchanged. Renaming a window over grpcurl is refused
// outright and the name stays.
func TestAdversarialSendKeysAround(t *testing.T) {
	env := adversaryUp(t)
	grpcurl := grpcurlPath(t)
	human, before := settledShell(t, env)
	terminald := env.Layout.DaemonSocket("terminald")

	for _, c := range []struct{ name, cmd string }{
		{"grpcurl SendKeys", shellCmd("timeout", "60", grpcurl, "-plaintext", "-unix", "-d",
			`{"terminal_id":"`+human+`","keys":["echo pwned","Enter"]}`, terminald, "phantom.terminal.v1.TerminalService/SendKeys")},
		{"phantom send after setsid and env -u", "setsid env -u PHANTOM_TAB_ID -u PHANTOM_MCP_SOCKET " +
			shellCmd(phantomBin, "send", human, "echo pwned", "Enter")},
	} {
		a := newAttacker(t, env, "attacker")
		j := a.start(c.cmd)
		s := asksHuman(t, env, j, a.tab, "send_keys", c.name)
		if subject, _ := s["subject"].(string); !strings.Contains(subject, "echo pwned␍") {
			t.Errorf("%s: the sheet does not show the keys as they would be typed:\n%v", c.name, s)
		}
		deny(t, env, s)
		if r := j.wait(); !refused(r) {
			t.Errorf("%s from tab %s, denied: want a refusal, got %v", c.name, a.tab, r)
		}
		unchangedOutput(t, env, human, before, c.name)
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
