package nvim

import (
	"bytes"
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// fakeNvim serves the far end of a pipe: it answers each request by
// handler, after sending a request and a notification of its own.
func fakeNvim(t *testing.T, handle func(method string, params []any) (errv, result any)) *Client {
	t.Helper()
	a, b := net.Pipe()
	c := newClient(a, "pipe")
	t.Cleanup(func() { c.Close() })
	go func() {
		dec, enc := msgpack.NewDecoder(b), msgpack.NewEncoder(b)
		enc.Encode([]any{kindNotification, "redraw", []any{}})
		enc.Encode([]any{kindRequest, 7, "ask", []any{}})
		for {
			m, err := readMessage(dec)
			if err != nil {
				b.Close()
				return
			}
			if m.kind != kindRequest {
				continue // our request's error answer
			}
			var params []any
			msgpack.Unmarshal(m.params, &params)
			e, r := handle(m.method, params)
			enc.Encode([]any{kindResponse, m.id, e, r})
		}
	}()
	return c
}

func TestCall(t *testing.T) {
	c := fakeNvim(t, func(method string, p []any) (any, any) {
		if method == "fail" {
			return []any{0, "Vim:E37: No write"}, nil
		}
		return nil, p
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	tests := []struct {
		method  string
		args    []any
		want    []any
		wantErr string
	}{
		{"echo", []any{"a", int8(1)}, []any{"a", int8(1)}, ""},
		{"echo", nil, []any{}, ""},
		{"fail", nil, nil, "neovim fail: Vim:E37: No write"},
	}
	for _, tt := range tests {
		var got []any
		err := c.Call(ctx, tt.method, &got, tt.args...)
		if tt.wantErr != "" {
			var ne *Error
			if !errors.As(err, &ne) || err.Error() != tt.wantErr {
				t.Errorf("%s = %v, want %s", tt.method, err, tt.wantErr)
			}
			continue
		}
		if err != nil || len(got) != len(tt.want) {
			t.Errorf("%s(%v) = %v %v, want %v", tt.method, tt.args, got, err, tt.want)
		}
	}
}

func TestClosedAndCancelled(t *testing.T) {
	block := make(chan struct{})
	c := fakeNvim(t, func(string, []any) (any, any) { <-block; return nil, nil })
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := c.Call(ctx, "slow", nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a call past its context = %v", err)
	}
	close(block)
	c.Close()
	if err := c.Call(context.Background(), "x", nil); !errors.Is(err, ErrClosed) {
		t.Errorf("a call on a closed client = %v, want ErrClosed", err)
	}
}

// FuzzReadMessage: any bytes decode to messages or an error, never a
// panic or a hang.
func FuzzReadMessage(f *testing.F) {
	for _, m := range [][]any{
		{kindRequest, 1, "nvim_eval", []any{"1"}},
		{kindResponse, 1, nil, map[string]any{"a": []any{1, "b"}}},
		{kindResponse, 2, []any{0, "err"}, nil},
		{kindNotification, "redraw", []any{}},
	} {
		b, _ := msgpack.Marshal(m)
		f.Add(b)
	}
	f.Add([]byte{0x94, 0x01, 0xce, 0xff, 0xff, 0xff, 0xff, 0xdb, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		d := msgpack.NewDecoder(bytes.NewReader(b))
		for i := 0; i < 100; i++ {
			if _, err := readMessage(d); err != nil {
				return
			}
		}
	})
}
