package servers

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/internal/errdefs"
)

// TestScope: an agent sees, restarts, names (configure's server_id) and
// gets diagnostics from the servers of its own confinement only, and an
// unknown-to-it id lists none of the others; the human sees and restarts
// every server.
func TestScope(t *testing.T) {
	launcher, _ := recordingLauncher(t)
	r, ws := fakeRegistry(t, Options{Launcher: launcher}, nil)
	write(t, ws, map[string]string{"a.fake": "error: x\npublish\n", ".hidden/b.fake": "error: y\npublish\n"})
	t1, _ := InSandbox("t1", []string{"--write=" + ws, "--write=/tmp"})
	t2, _ := InSandbox("t2", []string{"--write=" + ws, "--write=/tmp"})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// Every confinement has a server of ws; tab t2's also knows .hidden/b.fake,
	// which the walk of a directory query leaves out (a hidden directory):
	// only the servers that know it report it.
	for _, c := range []Confinement{Unconfined, t1, t2} {
		if _, err := r.Diagnostics(ctx, Query{Path: filepath.Join(ws, "a.fake"), Conf: c, Wait: 10 * time.Second}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.Diagnostics(ctx, Query{Path: filepath.Join(ws, ".hidden", "b.fake"), Conf: t2, Wait: 10 * time.Second}); err != nil {
		t.Fatal(err)
	}
	human, id1, id2 := "fake:"+ws, "fake:"+ws+"@t1", "fake:"+ws+"@t2"

	tests := []struct {
		name    string
		scope   Scope
		sees    []string
		restart string // an id it may not restart or name, "" none
	}{
		{"the human", Everyone, []string{human, id1, id2}, ""},
		{"tab t1's agent", Own(t1), []string{id1}, id2},
		{"tab t2's agent", Own(t2), []string{id2}, id1},
		{"an agent of no tab", ScopeOf(Confinement{Key: OutsideTabs}, true), nil, human},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ids []string
			for _, in := range r.List(tt.scope) {
				ids = append(ids, in.ID)
			}
			if !slices.Equal(ids, tt.sees) {
				t.Errorf("List = %v, want %v", ids, tt.sees)
			}
			for _, id := range tt.sees {
				if in, err := r.Restart(ctx, id, tt.scope); err != nil || in.ID != id {
					t.Errorf("Restart(%s) = %+v, %v; want it restarted", id, in, err)
				}
			}
			if tt.restart == "" {
				return
			}
			before := r.List(Everyone)
			_, err := r.Restart(ctx, tt.restart, tt.scope)
			if !errdefs.Is(err, errdefs.ErrNotFound) {
				t.Errorf("Restart(%s) = %v, want not found", tt.restart, err)
			}
			if err != nil {
				_, running, _ := strings.Cut(err.Error(), "running: ")
				if want := "[" + strings.Join(tt.sees, " ") + "]"; !strings.HasPrefix(running, want+")") {
					t.Errorf("Restart(%s) says %q, want it to list as running %s alone", tt.restart, err, want)
				}
			}
			for i, in := range r.List(Everyone) {
				if in.ID == tt.restart && in.Restarts != before[i].Restarts {
					t.Errorf("Restart(%s) out of scope restarted it", tt.restart)
				}
			}
			if _, err := r.Configure(ctx, Change{ServerID: tt.restart, Dir: ws, ForAgent: true, Conf: Confinement{Key: tt.scope.key}}); !errdefs.Is(err, errdefs.ErrNotFound) {
				t.Errorf("Configure(server_id %s) = %v, want not found", tt.restart, err)
			}
		})
	}

	// A directory query reports files only its own confinement's servers
	// know of.
	for _, c := range []Confinement{Unconfined, t1, t2} {
		rep, err := r.Diagnostics(ctx, Query{Path: ws, Conf: c, Wait: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		hidden := false
		for _, f := range rep.Files {
			hidden = hidden || filepath.Base(f.Path) == "b.fake"
			if want := serverID("fake", ws, c.Key); f.ServerID != want {
				t.Errorf("Diagnostics(%s) in %q reports %s from %s, want only %s", ws, c.Key, f.Path, f.ServerID, want)
			}
		}
		if hidden != (c.Key == "t2") {
			t.Errorf("Diagnostics(%s) in %q reports .hidden/b.fake: %v, want %v (only t2's server knows it)", ws, c.Key, hidden, c.Key == "t2")
		}
	}
}
