package lsp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
)

// Handler receives what the server sends on its own: notifications and
// requests. Both are called from the connection's one reader goroutine, in
// the order the server sent them — the order that makes progress and
// diagnostics meaningful — so they must not block for long.
type Handler interface {
	// Notify handles a notification.
	Notify(method string, params json.RawMessage)
	// Request answers a request; a nil result is sent as JSON null.
	Request(method string, params json.RawMessage) (any, error)
}

// ResponseError is an error the server answered a call with.
type ResponseError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *ResponseError) Error() string {
	return fmt.Sprintf("server error %d: %s", e.Code, e.Message)
}

// MethodNotFound is JSON-RPC's code for an unknown method.
const MethodNotFound = -32601

// ErrClosed is returned by calls on a connection whose server went away.
var ErrClosed = errors.New("language server connection closed")

// wire is any JSON-RPC 2.0 message.
type wire struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *ResponseError  `json:"error,omitempty"`
}

// Conn is a JSON-RPC 2.0 connection to one language server.
type Conn struct {
	w   io.Writer
	wmu sync.Mutex // one message at a time on w

	h    Handler
	done chan struct{}

	mu      sync.Mutex
	nextID  int64
	pending map[int64]chan wire
	err     error // why the connection ended, once done
}

// NewConn speaks JSON-RPC over r and w, handing what the server sends on
// its own to h, and reads until r ends.
func NewConn(r io.Reader, w io.Writer, h Handler) *Conn {
	c := &Conn{w: w, h: h, done: make(chan struct{}), pending: map[int64]chan wire{}}
	go c.read(bufio.NewReaderSize(r, 64<<10))
	return c
}

// Done is closed when the connection ended (the server closed its
// output); Err then says why.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err is why the connection ended, or nil while it is up.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Call sends a request and decodes its result into result (unless nil),
// waiting until the server answers, the connection ends or ctx is done;
// a call given up on is cancelled with $/cancelRequest.
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	ch := make(chan wire, 1)
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return fmt.Errorf("%s: %w", method, c.err)
	}
	c.nextID++
	id := c.nextID
	c.pending[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}()
	if err := c.send(wire{ID: json.RawMessage(strconv.FormatInt(id, 10)), Method: method}, params); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	select {
	case resp := <-ch:
		if resp.Error != nil {
			return fmt.Errorf("%s: %w", method, resp.Error)
		}
		if result == nil || len(resp.Result) == 0 {
			return nil
		}
		if err := json.Unmarshal(resp.Result, result); err != nil {
			return fmt.Errorf("%s: decode result: %w", method, err)
		}
		return nil
	case <-c.done:
		return fmt.Errorf("%s: %w", method, c.Err())
	case <-ctx.Done():
		_ = c.Notify("$/cancelRequest", map[string]int64{"id": id})
		return fmt.Errorf("%s: no answer: %w", method, ctx.Err())
	}
}

// Notify sends a notification.
func (c *Conn) Notify(method string, params any) error {
	if err := c.send(wire{Method: method}, params); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	return nil
}

func (c *Conn) send(m wire, params any) error {
	m.JSONRPC = "2.0"
	if params != nil {
		b, err := json.Marshal(params)
		if err != nil {
			return fmt.Errorf("encode params: %w", err)
		}
		m.Params = b
	}
	return c.write(m)
}

func (c *Conn) write(m wire) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return WriteMessage(c.w, b)
}

// read dispatches messages until the server's output ends.
func (c *Conn) read(r *bufio.Reader) {
	var err error
	for {
		var body []byte
		if body, err = ReadMessage(r); err != nil {
			break
		}
		var m wire
		if jerr := json.Unmarshal(body, &m); jerr != nil {
			continue // not JSON-RPC: skip it rather than lose the server
		}
		switch {
		case m.Method != "" && len(m.ID) > 0:
			c.answer(m)
		case m.Method != "":
			c.h.Notify(m.Method, m.Params)
		case len(m.ID) > 0:
			id, perr := strconv.ParseInt(string(m.ID), 10, 64)
			c.mu.Lock()
			ch, ok := c.pending[id]
			c.mu.Unlock()
			if perr == nil && ok {
				ch <- m
			}
		}
	}
	if errors.Is(err, io.EOF) {
		err = ErrClosed
	} else {
		err = fmt.Errorf("%w: %v", ErrClosed, err)
	}
	c.mu.Lock()
	c.err = err
	c.mu.Unlock()
	close(c.done)
}

// answer replies to a request from the server.
func (c *Conn) answer(m wire) {
	result, err := c.h.Request(m.Method, m.Params)
	resp := wire{JSONRPC: "2.0", ID: m.ID}
	if err != nil {
		var re *ResponseError
		if !errors.As(err, &re) {
			re = &ResponseError{Code: -32603, Message: err.Error()}
		}
		resp.Error = re
	} else {
		b, jerr := json.Marshal(result)
		if jerr != nil {
			b = []byte("null")
		}
		resp.Result = b
	}
	_ = c.write(resp) // a broken pipe also ends the reader
}
