package config

import (
	"reflect"
	"strings"
	"testing"
)

// TestLoadSandbox checks that configured agent paths replace that agent's
// defaults, leave the other agents' defaults alone, and that the common
// list comes first for every agent.
func TestLoadSandbox(t *testing.T) {
	c, err := Load(writeConfig(t, `{"sandbox": {
		"writable": ["/srv/cache/", "~/.cache/go-build/"],
		"agent_paths": {"claude": ["~/.claude/"], "mine": ["~/.mine/", "~/.cache/mine*"]}
	}}`))
	if err != nil {
		t.Fatal(err)
	}
	common := []string{"/srv/cache/", "~/.cache/go-build/"}
	for _, tt := range []struct {
		agent string
		want  []string
	}{
		{"", common},
		{"claude", append(common[:2:2], "~/.claude/")},
		{"mine", append(common[:2:2], "~/.mine/", "~/.cache/mine*")},
		{"codex", append(common[:2:2], DefaultAgentPaths()["codex"]...)},
		{"nosuchagent", common},
	} {
		if got := c.Sandbox.PathsFor(tt.agent); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("PathsFor(%q) = %q, want %q", tt.agent, got, tt.want)
		}
	}
}

// TestDefaultAgentPathsValid checks that every default agent has paths or
// an agent home, that the agents with a home write nothing else of yours,
// and that the paths pass the same check as configured ones.
func TestDefaultAgentPathsValid(t *testing.T) {
	paths, homes := DefaultAgentPaths(), DefaultAgentHomes()
	for name := range DefaultAgents() {
		_, home := homes[name]
		switch {
		case !home && len(paths[name]) == 0:
			t.Errorf("default agent %q has no sandbox paths and no agent home", name)
		case home && len(paths[name]) != 0:
			t.Errorf("default agent %q has an agent home but also writes %q", name, paths[name])
		}
	}
	if err := (Sandbox{AgentPaths: paths}).check(); err != nil {
		t.Errorf("default agent paths: %v", err)
	}
}

// TestCheckSandboxPath checks which spellings of a path the settings take.
func TestCheckSandboxPath(t *testing.T) {
	for _, tt := range []struct {
		path string
		// wantErr is a substring of the error, "" for a valid path.
		wantErr string
	}{
		{"/opt/cache", ""},
		{"/opt/cache/", ""},
		{"~/.claude/", ""},
		{"~/.claude.json", ""},
		{"~/.cache/claude*", ""},
		{"~/.config/a b/", ""},
		{"", "empty"},
		{"cache", "neither absolute"},
		{"./cache", "neither absolute"},
		{"~", "only ~/"},
		{"~root/.ssh", "only ~/"},
		{"~/", "whole home"},
		{"/", "whole file system"},
		{"~/../etc", "clean form"},
		{"~/..", "clean form"},
		{"~/./x", "clean form"},
		{"/a//b", "clean form"},
		{"/a/../b", "clean form"},
		{"~/a/.", "clean form"},
		{"/a\x00b", "NUL"},
		{"~/.cache/[claude", "bad pattern"},
	} {
		err := CheckSandboxPath(tt.path)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("CheckSandboxPath(%q) = %v, want nil", tt.path, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("CheckSandboxPath(%q) = %v, want an error about %q", tt.path, err, tt.wantErr)
		}
	}
}

// TestDefaultAgentHomes checks each built-in agent home: the variable the
// agent's release reads, a directory outside Phantom's own, and seeds that
// stay inside the places they name.
func TestDefaultAgentHomes(t *testing.T) {
	homes := DefaultAgentHomes()
	for _, tt := range []struct {
		agent, variable string
	}{
		{"claude", "CLAUDE_CONFIG_DIR"},
		{"codex", "CODEX_HOME"},
		{"gemini", "GEMINI_CLI_HOME"},
	} {
		h, ok := homes[tt.agent]
		if !ok {
			t.Errorf("no agent home for %s", tt.agent)
			continue
		}
		if h.Var != tt.variable {
			t.Errorf("%s: Var = %q, want %q", tt.agent, h.Var, tt.variable)
		}
		if err := h.check(); err != nil {
			t.Errorf("%s: %v", tt.agent, err)
		}
		if got, want := h.Path("/home/u"), "/home/u/.local/share/phantom/agents/"+tt.agent; got != want {
			t.Errorf("%s: Path = %q, want %q", tt.agent, got, want)
		}
	}
	for _, bad := range []AgentHome{
		{Var: "X", Dir: "../x"},
		{Var: "X", Dir: "/abs"},
		{Var: "X", Dir: "a", Seed: []Seed{{"a/../../b", "c"}}},
		{Dir: "a"},
	} {
		if bad.check() == nil {
			t.Errorf("check(%+v) = nil, want an error", bad)
		}
	}
}

// TestCheckSandboxSocket checks which names sandbox.sockets accepts.
func TestCheckSandboxSocket(t *testing.T) {
	for _, tt := range []struct {
		p       string
		wantErr string
	}{
		{"/run/docker.sock", ""},
		{"~/.docker/run/docker.sock", ""},
		{"/run/user/1000/bus", ""},
		{"", "empty"},
		{"docker.sock", "neither absolute"},
		{"~/.ssh/", "ends in /"},
		{"/tmp/ssh-*/agent.*", "pattern"},
		{"/run/../etc/x", "clean"},
		{"~other/x", "only ~/"},
	} {
		err := CheckSandboxSocket(tt.p)
		if (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("CheckSandboxSocket(%q) = %v, want an error containing %q", tt.p, err, tt.wantErr)
		}
	}
}
