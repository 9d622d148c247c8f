package gateway

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkCallFree measures one tools/call of a free tool (list_terminals,
// no Authorize round trip) through the gateway and fake terminald, one
// call at a time as an agent makes them, and reports the median and p99
// too. The fakes share the benchmark's process, and Run's runtime
// settings (tune) are not applied: set GOGC and GOMAXPROCS to compare.
func BenchmarkCallFree(b *testing.B) {
	g := startFakeGateway(b, progressEvery)
	nc, br := dialHello(b, g.sock)
	req := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_terminals"}}` + "\n")
	send := func(l string) {
		if _, err := nc.Write([]byte(l + "\n")); err != nil {
			b.Fatal(err)
		}
	}
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
	if _, err := br.ReadString('\n'); err != nil {
		b.Fatal(err)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	times := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		nc.Write(req)
		l, err := br.ReadString('\n')
		if err != nil || !strings.Contains(l, `"result"`) {
			b.Fatalf("%v %.300s", err, l)
		}
		times = append(times, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds()), "µs-median")
	b.ReportMetric(float64(times[len(times)*99/100].Microseconds()), "µs-p99")
}
