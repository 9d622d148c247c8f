// Command mcpbench times one MCP tool through Phantom's gateway, as an
// agent sees it: it starts `phantom +mcp-server` with the official Go SDK
// client, calls the tool a few times to warm up, then N times, and prints
// the latencies' percentiles as one JSON line. The compose stack's figures
// come from running it inside the stack and beside a local instance.
//
//	mcpbench PHANTOM_BIN TOOL N
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Stats are the latencies of N calls, in microseconds.
type Stats struct {
	Tool string  `json:"tool"`
	N    int     `json:"n"`
	P50  float64 `json:"p50_us"`
	P90  float64 `json:"p90_us"`
	P99  float64 `json:"p99_us"`
	Mean float64 `json:"mean_us"`
}

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: mcpbench PHANTOM_BIN TOOL N")
		os.Exit(2)
	}
	n, err := strconv.Atoi(os.Args[3])
	if err != nil || n < 1 {
		fmt.Fprintf(os.Stderr, "mcpbench: N %q: want a positive number\n", os.Args[3])
		os.Exit(2)
	}
	s, err := run(os.Args[1], os.Args[2], n)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcpbench:", err)
		os.Exit(1)
	}
	json.NewEncoder(os.Stdout).Encode(s)
}

func run(bin, tool string, n int) (Stats, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpbench", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(bin, "+mcp-server", "--client=bench")}, nil)
	if err != nil {
		return Stats{}, fmt.Errorf("connect through %s +mcp-server: %w", bin, err)
	}
	defer cs.Close()
	call := func() error {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
		if err == nil && res.IsError {
			b, _ := json.Marshal(res.Content)
			err = fmt.Errorf("%s failed: %s", tool, b)
		}
		return err
	}
	warm := max(n/10, 5)
	for range warm {
		if err := call(); err != nil {
			return Stats{}, err
		}
	}
	lat := make([]float64, 0, n)
	for range n {
		t0 := time.Now()
		if err := call(); err != nil {
			return Stats{}, err
		}
		lat = append(lat, float64(time.Since(t0).Nanoseconds())/1e3)
	}
	slices.Sort(lat)
	sum := 0.0
	for _, l := range lat {
		sum += l
	}
	at := func(p float64) float64 { return lat[min(len(lat)-1, int(p*float64(len(lat))))] }
	return Stats{Tool: tool, N: n, P50: at(0.50), P90: at(0.90), P99: at(0.99), Mean: sum / float64(n)}, nil
}
