package servers

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// lastPublish is when path's diagnostics last arrived from s.
func lastPublish(r *Registry, path string) time.Time {
	for _, s := range r.snapshot(Everyone) {
		s.mu.Lock()
		fd := s.diags[path]
		s.mu.Unlock()
		if fd != nil {
			return fd.at
		}
	}
	return time.Time{}
}

func median(ds []time.Duration) float64 {
	slices.Sort(ds)
	return float64(ds[len(ds)/2].Microseconds()) / 1000
}

// BenchmarkGoFirstSettled: a fresh gopls on a small module; settled-ms is
// the time from the request until lspd answers settled, publish-ms until
// gopls's last publishDiagnostics before that answer (the difference is
// the freshness contract's cost: the quiet period).
func BenchmarkGoFirstSettled(b *testing.B) {
	needServer(b, "gopls")
	var settledT, publishT []time.Duration
	for i := 0; b.Loop(); i++ {
		dir := b.TempDir()
		write(b, dir, map[string]string{
			"go.mod":  "module example.com/m\n\ngo 1.21\n",
			"main.go": "package main\n\nfunc main() {\n\tvar n int = \"one\"\n\t_ = n\n}\n",
		})
		r, err := New(Options{})
		if err != nil {
			b.Fatal(err)
		}
		path := filepath.Join(dir, "main.go")
		start := time.Now()
		rep := settled(b, r, path, time.Minute)
		settledT = append(settledT, time.Since(start))
		publishT = append(publishT, lastPublish(r, path).Sub(start))
		if !rep.Settled {
			b.Fatalf("not settled: %+v", rep)
		}
		r.Close()
	}
	b.ReportMetric(median(settledT), "settled-ms")
	b.ReportMetric(median(publishT), "publish-ms")
}

// BenchmarkGoRefreshAfterEdit: one line edited on disk, then a request
// waiting for settled diagnostics; p50 of both figures as above, from the
// write.
func BenchmarkGoRefreshAfterEdit(b *testing.B) {
	needServer(b, "gopls")
	dir := b.TempDir()
	write(b, dir, map[string]string{"go.mod": "module example.com/m\n\ngo 1.21\n", "main.go": "package main\n\nfunc main() {}\n"})
	path := filepath.Join(dir, "main.go")
	r := newRegistry(b, Options{})
	settled(b, r, path, time.Minute)
	var settledT, publishT []time.Duration
	for i := 0; b.Loop(); i++ {
		body := fmt.Sprintf("package main\n\nfunc main() {\n\tvar n int = %d\n\t_ = n\n}\n", i)
		if i%2 == 1 {
			body = fmt.Sprintf("package main\n\nfunc main() {\n\tvar n int = \"%d\"\n\t_ = n\n}\n", i)
		}
		start := time.Now()
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
		rep := settled(b, r, path, time.Minute)
		settledT = append(settledT, time.Since(start))
		publishT = append(publishT, lastPublish(r, path).Sub(start))
		if !rep.Settled || !rep.Files[0].Current() {
			b.Fatalf("not settled and current: %+v", rep)
		}
	}
	b.ReportMetric(median(settledT), "p50-settled-ms")
	b.ReportMetric(median(publishT), "p50-publish-ms")
}
