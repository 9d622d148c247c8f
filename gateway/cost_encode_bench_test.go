package gateway

import (
	"encoding/json"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/protobuf/proto"

	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// benchList is a list_terminals answer with n shells at their prompts.
func benchList(n int) *terminalv1.ListTerminalsResponse {
	r := &terminalv1.ListTerminalsResponse{}
	for i := range n {
		r.Terminals = append(r.Terminals, &terminalv1.Terminal{Id: fmt.Sprint("t", i+1), Title: "bash", Directory: "/home/user/src/project",
			Idle: true, ForegroundProcess: &terminalv1.Process{Pid: int32(1000 + i), Name: "bash"}, WindowId: "w1", Cols: 80, Rows: 24,
			Focused: i == 0})
	}
	return r
}

// cpuTime is the process's CPU time so far: on a busy machine the wall
// time per operation says more about the neighbours than about the code.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuPerOp runs f b.N times and reports the CPU time per operation.
func cpuPerOp(b *testing.B, f func()) {
	start := cpuTime()
	for range b.N {
		f()
	}
	b.ReportMetric(float64((cpuTime()-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// BenchmarkListResult measures the gateway's encoding of a list_terminals
// answer into the response line, with 1 and 200 tabs: protojson and the
// SDK's encoding of the whole result (before), against resultJSON and the
// splice (after).
func BenchmarkListResult(b *testing.B) {
	id, _ := jsonrpc.MakeID(float64(1))
	for _, n := range []int{1, 200} {
		r := benchList(n)
		b.Run(fmt.Sprint("protojson+sdk/", n), func(b *testing.B) {
			cpuPerOp(b, func() {
				j, _ := resultsEncoder.Marshal(r)
				res, _ := json.Marshal(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(j)}}, StructuredContent: json.RawMessage(j)})
				jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Result: res})
			})
		})
		b.Run(fmt.Sprint("resultJSON+splice/", n), func(b *testing.B) {
			var s resultSplicer
			cpuPerOp(b, func() {
				j, _ := resultJSON(r)
				res, _ := json.Marshal(s.result(j, nil))
				enc, _ := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Result: res})
				_, done := s.splice(enc)
				done()
			})
		})
		wire, _ := proto.Marshal(r)
		w := newWirePlan(r.ProtoReflect().Type())
		b.Run(fmt.Sprint("wire+splice/", n), func(b *testing.B) {
			var s resultSplicer
			cpuPerOp(b, func() {
				j, text, _ := w.encode(wire)
				res, _ := json.Marshal(s.result(j, text))
				enc, _ := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Result: res})
				_, done := s.splice(enc)
				done()
			})
		})
	}
}
