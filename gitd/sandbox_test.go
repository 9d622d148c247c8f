package gitd

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/phantom-dev/phantom/internal/errdefs"
	"github.com/phantom-dev/phantom/internal/guard"
	"github.com/phantom-dev/phantom/terminald/sandbox"
)

// TestConfinement decides, for each kind of caller, how gitd runs git.
func TestConfinement(t *testing.T) {
	tabRules := sandbox.Rules{WriteDirs: []string{"/home/h/repo", "/tmp"}, Devices: []string{"/dev/null"}}
	describe := func(_ context.Context, tab string) (sandbox.Rules, bool, error) {
		switch tab {
		case "sandboxed":
			return tabRules, true, nil
		case "plain":
			return sandbox.Rules{}, false, nil
		}
		return sandbox.Rules{}, false, errors.New("no such tab")
	}
	tests := []struct {
		name      string
		caller    guard.Caller
		placed    bool
		launcher  string
		wantRules *sandbox.Rules // nil: unconfined
		wantErr   error
	}{
		{name: "the human", caller: guard.Caller{}, placed: true, launcher: "/bin/phantom"},
		{name: "a daemon over TCP", caller: guard.Caller{Peer: "gateway"}, placed: true, launcher: "/bin/phantom"},
		{name: "agent in a sandboxed tab, from the tab", caller: guard.Caller{Inside: true, ForAgent: true, TabID: "sandboxed"},
			placed: true, launcher: "/bin/phantom", wantRules: &tabRules},
		{name: "agent in a sandboxed tab, through the gateway", caller: guard.Caller{ForAgent: true, TabID: "sandboxed", Peer: "gateway"},
			placed: true, launcher: "/bin/phantom", wantRules: &tabRules},
		{name: "plain shell tab", caller: guard.Caller{Inside: true, ForAgent: true, TabID: "plain"}, placed: true, launcher: "/bin/phantom"},
		{name: "inside Phantom, in no tab", caller: guard.Caller{Inside: true, ForAgent: true, LeftTab: true},
			placed: true, launcher: "/bin/phantom", wantRules: &tightest},
		{name: "agent in no tab, through the gateway", caller: guard.Caller{ForAgent: true, LeftTab: true},
			placed: true, launcher: "/bin/phantom", wantRules: &tightest},
		{name: "agent outside Phantom, through the gateway", caller: guard.Caller{ForAgent: true}, placed: true, launcher: "/bin/phantom"},
		{name: "tab terminald does not know", caller: guard.Caller{Inside: true, ForAgent: true, TabID: "gone"},
			placed: true, launcher: "/bin/phantom", wantErr: errdefs.ErrUnavailable},
		{name: "not placed", caller: guard.Caller{}, placed: false, launcher: "/bin/phantom", wantErr: errdefs.ErrPermissionDenied},
		{name: "sandboxed without a launcher", caller: guard.Caller{Inside: true, ForAgent: true, TabID: "sandboxed"},
			placed: true, wantErr: errdefs.ErrFailedPrecondition},
		{name: "human without a launcher", caller: guard.Caller{}, placed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := confinement(context.Background(), tt.caller, tt.placed, describe, tt.launcher)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("confinement(%+v) error = %v, want %v", tt.caller, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("confinement(%+v): %v", tt.caller, err)
			}
			if tt.wantRules == nil {
				if got.Confined() {
					t.Fatalf("confinement(%+v) = %+v, want unconfined", tt.caller, *got.Rules)
				}
				return
			}
			if !got.Confined() || got.Launcher != tt.launcher {
				t.Fatalf("confinement(%+v) = %+v, want rules %+v with launcher %s", tt.caller, got, *tt.wantRules, tt.launcher)
			}
			if !slices.Equal(got.Rules.Flags(), tt.wantRules.Flags()) {
				t.Errorf("rules = %v, want %v", got.Rules.Flags(), tt.wantRules.Flags())
			}
		})
	}
}
