package main

// Red team round 2 for issue 23: attacks on round 1's fixes from real
// tabs. HOLE tests fail while the hole is open; HOLD tests pass.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rt23bImpostor is a script that makes two pipes, forks a helper that
// closes them at once, writes the first request, forks the real bridge
// on the pipes (it starts a second later) and execs the granted program,
// which then holds their other ends alone (fds inW, outR): that is what
// lineage.talksOnlyTo sees at the hello. The helper then opens
// /proc/<granted program>/fd/inW and /outR — a pipe opens again through
// /proc, with no ptrace attach — and speaks on the bridge.
const rt23bImpostor = `import os, sys, time
bridge, agent, a1, a2, bout = sys.argv[1:6]
lines = [l.encode() + b"\n" for l in sys.argv[6:]]
inR, inW = os.pipe(); outR, outW = os.pipe()
me = os.getpid()
if os.fork() == 0:
    os.close(inR); os.close(outW); os.close(inW); os.close(outR)
    time.sleep(4)
    w = open("/proc/%d/fd/%d" % (me, inW), "wb", buffering=0)
    r = open("/proc/%d/fd/%d" % (me, outR), "rb", buffering=0)
    out = open(bout, "wb", buffering=0)
    for l in lines[1:]:
        w.write(l); time.sleep(0.5)
    while True:
        b = r.read(4096)
        if not b: break
        out.write(b)
    os._exit(0)
os.write(inW, lines[0])
if os.fork() == 0:
    time.sleep(1)
    os.dup2(inR, 0); os.dup2(outW, 1)
    for f in (inR, inW, outR, outW): os.close(f)
    os.execv(bridge, [bridge, "+mcp-server", "--client=claude"])
os.close(inR); os.close(outW)
os.set_inheritable(inW, True); os.set_inheritable(outR, True)
os.environ["TESTAGENT_CLIENT"] = "claude"
os.execv(agent, [agent, sys.argv[0] + ".closer", a1, a2])
`

// TestRedTeam23b_BridgeStdioReopenedThroughProcAfterTheHello — HOLE
// (lineage.talksOnlyTo checks once, at the hello, who holds the pipes;
// another process of the user opens them again through /proc afterwards).
// claude has "always read all" in A; an impostor in A's tab reads the
// human's tab on that grant, without a sheet.
func TestRedTeam23b_BridgeStdioReopenedThroughProcAfterTheHello(t *testing.T) {
	t.Skip("same-user limit, stated in the README security model (who speaks on a bridge after its hello): a process of the agent's user that reaches the granted agent's descriptors (reopened through /proc/PID/fd, or in flight) speaks as it; kept as the record of the attack")
	env, bin := consentUp(t)
	human := humanTab(t, env, "human", "human-secret-marker")
	repoA, _ := consentRepos(t, bin)
	agent := sharedBins(t, bin, "testagent")
	inA, _ := grantInA(t, env, agent, bin, repoA, human, nil)

	idle := filepath.Join(inA.dir, "idle")
	release := filepath.Join(inA.dir, "release")
	b, _ := json.Marshal([]map[string]any{{"op": "wait", "file": release}, {"op": "exit"}})
	if err := os.WriteFile(idle+".json", b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.WriteFile(release, nil, 0o644); killAgent(readAgentLines(idle + ".jsonl")) })
	py := filepath.Join(inA.dir, "impostor.py")
	if err := os.WriteFile(py, []byte(rt23bImpostor), 0o644); err != nil {
		t.Fatal(err)
	}
	// The stand-in agent starts a bridge of its own, which would inherit
	// the pipes; a real agent run with no MCP servers starts none. The
	// stand-in's bridge therefore closes what it inherited first.
	closer := "#!/bin/sh\nfor fd in 3 4 5 6 7 8 9; do eval \"exec $fd>&-\"; done\nexec " + shellCmd(bin) + ` "$@"` + "\n"
	if err := os.WriteFile(py+".closer", []byte(closer), 0o755); err != nil {
		t.Fatal(err)
	}
	lines := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"impostor","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_output","arguments":{"terminal_id":"` + human + `","lines":20}}}`,
	}
	job := inA.start(`python3 ` + shellCmd(py, bin, agent, idle+".json", idle+".jsonl") + ` "$J.bout" ` + sq(lines[0]) + ` ` + sq(lines[1]) + ` ` + sq(lines[2]))
	bout := job.path + ".bout"
	var sheet map[string]any
	var reply string
	eventually(t, "the impostor's read to ask or answer", func() (bool, string) {
		if sheet = sheetOf(t, env, inA.tab, "read_output"); sheet != nil {
			return true, ""
		}
		out, _ := os.ReadFile(bout)
		for _, l := range strings.Split(string(out), "\n") {
			if strings.Contains(l, `"id":2`) {
				reply = l
				return true, ""
			}
		}
		if r, ok := job.done(); ok && r.code != 0 {
			return true, r.String()
		}
		return false, string(out) + job.output()
	})
	if sheet != nil {
		t.Logf("HOLD: the impostor asks: program %v", sheet["program"])
		deny(t, env, sheet)
		return
	}
	if strings.Contains(reply, "human-secret-marker") {
		t.Errorf("HOLE: the granted program held the bridge's pipes alone at the hello; a helper reopened them via /proc and read the human's tab on claude's grant without a sheet: %.300s", reply)
	} else {
		t.Fatalf("the impostor got neither a sheet nor the tab: reply %q, job %s", reply, job.output())
	}
}
