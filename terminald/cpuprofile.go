package terminald

import (
	"log/slog"
	"os"
	"runtime/pprof"
)

// cpuProfileEnv names a file terminald writes a CPU profile of its whole
// run to (go tool pprof reads it), for profiling a real daemon under a
// real load: PHANTOM_CPUPROFILE=/tmp/td.prof phantom up, the load, then
// phantom down. The profile is complete only after a clean stop.
const cpuProfileEnv = "PHANTOM_CPUPROFILE"

// startCPUProfile starts the CPU profile cpuProfileEnv asks for, if any,
// and returns what stops it and writes it out. A profile that cannot be
// started is logged, never fatal: it is a developer's tool.
func startCPUProfile(logger *slog.Logger) (stop func()) {
	path := os.Getenv(cpuProfileEnv)
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		logger.Warn("no CPU profile", "env", cpuProfileEnv, "err", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		logger.Warn("no CPU profile", "file", path, "err", err)
		return func() {}
	}
	logger.Info("writing a CPU profile", "file", path)
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			logger.Warn("CPU profile", "file", path, "err", err)
		}
	}
}
