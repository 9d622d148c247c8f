package lspd

import (
	"log/slog"
	"os"
	"sync"

	"github.com/phantom-dev/phantom/internal/paths"
	"github.com/phantom-dev/phantom/lspd/servers"
	"github.com/phantom-dev/phantom/terminald/sandbox"
)

// machineOf describes the instance and machine for the read-only
// sandbox, probing once, at the first call that needs it, whether the
// launcher can build the namespace walls here (as terminald does at its
// first sandboxed tab): probing starts a process, and most lspd runs
// never need it.
func machineOf(layout paths.Layout, launcher string, logger *slog.Logger) func() servers.Machine {
	var once sync.Once
	var walls bool
	return func() servers.Machine {
		once.Do(func() {
			err := sandbox.ProbeWalls(launcher)
			if walls = err == nil; !walls && logger != nil {
				logger.Warn("agents' read-only language server sandbox gets no private mount namespace", "reason", err)
			}
		})
		home, _ := os.UserHomeDir()
		return servers.Machine{Layout: layout, Home: home, Launcher: launcher, Getenv: os.Getenv, Walls: walls}
	}
}
