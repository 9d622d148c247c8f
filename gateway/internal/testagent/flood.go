package main

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// floodStats is the outcome of a flood step.
type floodStats struct {
	Calls int `json:"calls"`
	// Refused counts the calls that returned an error result; Allowed
	// those that returned another; Cancelled those given up; Failed those
	// that failed otherwise.
	Refused   int `json:"refused"`
	Allowed   int `json:"allowed"`
	Cancelled int `json:"cancelled"`
	Failed    int `json:"failed"`
	// Texts are the distinct texts of the results and errors, cut to 400
	// bytes, with how many times each came.
	Texts  map[string]int `json:"texts"`
	Millis int64          `json:"ms"`
}

// flood runs a flood step: s.N calls of s.Tool, each cancelled after
// s.CancelMS when it has not returned — an agent that raises a sheet and
// withdraws it in a loop.
func flood(ctx context.Context, cs *mcp.ClientSession, s step) floodStats {
	st := floodStats{Texts: map[string]int{}}
	start := time.Now()
	note := func(text string) {
		if len(text) > 400 {
			text = text[:400]
		}
		if _, ok := st.Texts[text]; ok || len(st.Texts) < 20 {
			st.Texts[text]++
		}
	}
	for i := range s.N {
		args := expand(s.Args)
		for k, v := range args {
			if t, ok := v.(string); ok {
				args[k] = strings.ReplaceAll(t, "$I", strconv.Itoa(i))
			}
		}
		cctx, cancel := context.WithTimeout(ctx, time.Duration(s.CancelMS)*time.Millisecond)
		res, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: s.Tool, Arguments: args})
		cancel()
		st.Calls++
		switch {
		case err != nil && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)):
			st.Cancelled++
		case err != nil:
			st.Failed++
			note(err.Error())
		case res.IsError:
			st.Refused++
			note(textOf(res))
		default:
			st.Allowed++
			note(textOf(res))
		}
	}
	st.Millis = time.Since(start).Milliseconds()
	return st
}
