package lspd

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/phantom-dev/phantom/internal/guard"
	"github.com/phantom-dev/phantom/internal/paths"
	"github.com/phantom-dev/phantom/lspd/servers"
)

// TestConfiner: where the language servers of each kind of caller run.
// No agent's call gets a server outside a sandbox where the kernel can
// sandbox; a tab whose sandbox cannot be learnt fails closed.
func TestConfiner(t *testing.T) {
	tabs := map[string][]string{"t1": {"--write=/work", "--write=/tmp"}, "bad": {"--write=relative"}}
	describe := func(_ context.Context, tab string) (bool, []string, error) {
		if tab == "gone" {
			return false, nil, errors.New("no tab gone")
		}
		f, ok := tabs[tab]
		return ok, f, nil
	}
	machine := func(walls bool) func() servers.Machine {
		return func() servers.Machine {
			return servers.Machine{Layout: paths.Layout{Runtime: "/nonexistent/run/phantom"}, Home: "/nonexistent/home", Getenv: func(string) string { return "" }, Walls: walls}
		}
	}
	tests := []struct {
		name       string
		ctx        context.Context
		canSandbox bool
		walls      bool
		key        string
		flags      string // joined; "-" for unconfined
		label      string
		agent      bool
		err        string
	}{
		{"no guard ran: the human's own", context.Background(), true, false, "", "-", "as you", false, ""},
		{"the human outside Phantom", guard.NewContext(context.Background(), guard.Caller{}), true, false, "", "-", "as you", false, ""},
		{"sandboxed tab", guard.NewContext(context.Background(), guard.Caller{Inside: true, ForAgent: true, TabID: "t1"}), true, false,
			"t1", "--write=/work --write=/tmp", "in the sandbox of tab t1", true, ""},
		{"sandboxed tab through the gateway", guard.NewContext(context.Background(), guard.Caller{ForAgent: true, TabID: "t1"}), true, false,
			"t1", "--write=/work --write=/tmp", "in the sandbox of tab t1", true, ""},
		{"unsandboxed tab", guard.NewContext(context.Background(), guard.Caller{Inside: true, ForAgent: true, TabID: "t2"}), true, false,
			"t2", "--write=/tmp", "read-only sandbox", true, ""},
		{"unsandboxed tab, walls", guard.NewContext(context.Background(), guard.Caller{Inside: true, ForAgent: true, TabID: "t2"}), true, true,
			"t2", "--isolate --tmp=/nonexistent/run/phantom/tmp/lspd/t2", "read-only sandbox", true, ""},
		{"left its tab", guard.NewContext(context.Background(), guard.Caller{Inside: true, ForAgent: true}), true, false,
			servers.OutsideTabs, "--write=/tmp", "read-only sandbox", true, ""},
		{"kernel cannot sandbox", guard.NewContext(context.Background(), guard.Caller{ForAgent: true, TabID: "t2"}), false, false,
			"t2", "-", "as you, outside any sandbox (", true, ""},
		{"sandbox unknown fails closed", guard.NewContext(context.Background(), guard.Caller{ForAgent: true, TabID: "gone"}), true, false,
			"", "", "", true, "cannot learn how tab gone is sandboxed"},
		{"bad rules fail closed", guard.NewContext(context.Background(), guard.Caller{ForAgent: true, TabID: "bad"}), true, false,
			"", "", "", true, "sandbox rules of tab bad"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := confiner{describe: describe, canSandbox: tt.canSandbox, machine: machine(tt.walls)}
			conf, agent, err := c.of(tt.ctx)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("of() = %+v, %v; want an error saying %q", conf, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			flags := strings.Join(conf.Flags, " ")
			if !conf.Confined() {
				flags = "-"
			}
			if conf.Key != tt.key || agent != tt.agent || !strings.Contains(conf.Label, tt.label) ||
				(tt.flags == "-") != (flags == "-") || !strings.Contains(flags, tt.flags) {
				t.Errorf("of() = %+v (agent %v)\nwant key %q, flags containing %q, label containing %q, agent %v", conf, agent, tt.key, tt.flags, tt.label, tt.agent)
			}
		})
	}
}

// TestScopeOf: which servers each kind of caller sees and restarts. An
// agent's scope is its own confinement's, known from the caller alone,
// so listing asks terminald nothing; the human's is every server.
func TestScopeOf(t *testing.T) {
	tests := []struct {
		name string
		ctx  context.Context
		want servers.Scope
	}{
		{"no guard ran: the human's own", context.Background(), servers.Everyone},
		{"the human outside Phantom", guard.NewContext(context.Background(), guard.Caller{}), servers.Everyone},
		{"an agent in tab t1", guard.NewContext(context.Background(), guard.Caller{Inside: true, ForAgent: true, TabID: "t1"}), servers.Own(servers.Confinement{Key: "t1"})},
		{"an agent through the gateway", guard.NewContext(context.Background(), guard.Caller{ForAgent: true, TabID: "t2"}), servers.Own(servers.Confinement{Key: "t2"})},
		{"an agent in no tab", guard.NewContext(context.Background(), guard.Caller{ForAgent: true}), servers.Own(servers.Confinement{Key: servers.OutsideTabs})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := scopeOf(tt.ctx); got != tt.want {
				t.Errorf("scopeOf = %+v, want %+v", got, tt.want)
			}
		})
	}
}
