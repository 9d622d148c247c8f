// Package nvim is a small msgpack-RPC client for Neovim's API socket
// (`nvim --listen SOCK`): requests with typed results, over one connection
// shared by concurrent callers. Neovim's own requests to the client are
// answered with an error and its notifications dropped, since Phantom
// subscribes to none.
//
// neovim/go-client would do this, but it is not served here; the protocol
// is small enough to speak with github.com/vmihailenco/msgpack/v5.
package nvim

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"sync"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/phantom-dev/phantom/internal/peercred"
)

// Client is a connection to one Neovim.
type Client struct {
	conn net.Conn
	path string

	wmu sync.Mutex // guards enc and the connection's write side
	enc *msgpack.Encoder
	w   *bufio.Writer

	mu      sync.Mutex
	nextID  uint32
	pending map[uint32]chan message
	err     error // set once, when the read loop ends

	done    chan struct{}  // closed when the read loop ends
	answers sync.WaitGroup // answers to Neovim's requests being written
}

// Dial connects to the Neovim listening on the Unix socket at path.
func Dial(ctx context.Context, path string) (*Client, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, fmt.Errorf("connect to neovim at %s: %w", path, err)
	}
	return newClient(conn, path), nil
}

func newClient(conn net.Conn, path string) *Client {
	w := bufio.NewWriter(conn)
	c := &Client{
		conn: conn, path: path, w: w, enc: msgpack.NewEncoder(w),
		pending: map[uint32]chan message{}, done: make(chan struct{}),
	}
	go c.read()
	return c
}

// Peer returns the credentials of the process at the other end: the
// Neovim, as the kernel recorded it when it accepted the connection. The
// caller must Close them.
func (c *Client) Peer() (peercred.Creds, error) {
	return peercred.FromConn(c.conn)
}

// Done is closed when the connection is gone (closed, or Neovim quit).
func (c *Client) Done() <-chan struct{} { return c.done }

// Close hangs up and waits for the client's goroutines to end.
func (c *Client) Close() error {
	err := c.conn.Close()
	<-c.done
	c.answers.Wait()
	return err
}

// Call sends a request and decodes its result into result (a pointer, or
// nil to drop it). It returns an *Error when Neovim answered with one, and
// ctx's error when ctx ends first: the late answer is then dropped.
func (c *Client) Call(ctx context.Context, method string, result any, args ...any) error {
	ch := make(chan message, 1)
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return err
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

	if err := c.write(func() error { return writeRequest(c.enc, id, method, args) }); err != nil {
		return fmt.Errorf("neovim %s: send: %w", method, err)
	}
	select {
	case m, ok := <-ch:
		if !ok {
			return fmt.Errorf("neovim %s: %w", method, c.closedErr())
		}
		if !isNil(m.err) {
			return decodeError(method, m.err)
		}
		if result == nil {
			return nil
		}
		if err := msgpack.Unmarshal(m.result, result); err != nil {
			return fmt.Errorf("neovim %s: decode result into %T: %w", method, result, err)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("neovim %s: %w", method, ctx.Err())
	}
}

// ExecLua runs a chunk of Lua in Neovim (nvim_exec_lua) with args as its
// `...` and decodes what it returns into result. One chunk runs as one
// step of Neovim's event loop, so nothing the human types lands between
// its API calls.
func (c *Client) ExecLua(ctx context.Context, code string, result any, args ...any) error {
	if args == nil {
		args = []any{}
	}
	return c.Call(ctx, "nvim_exec_lua", result, code, args)
}

func (c *Client) write(encode func() error) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := encode(); err != nil {
		return err
	}
	return c.w.Flush()
}

func (c *Client) closedErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// read dispatches responses to their callers until the stream ends or
// breaks; then every pending call fails with ErrClosed.
func (c *Client) read() {
	defer close(c.done)
	dec := msgpack.NewDecoder(bufio.NewReader(c.conn))
	var err error
	for {
		var m message
		if m, err = readMessage(dec); err != nil {
			break
		}
		switch m.kind {
		case kindResponse:
			c.mu.Lock()
			ch := c.pending[m.id]
			delete(c.pending, m.id)
			c.mu.Unlock()
			if ch != nil {
				ch <- m
			}
		case kindRequest:
			// Neovim waits for an answer: say no rather than hang it. The
			// answer is written aside, so that the read loop never waits on
			// a full socket while the peer waits for us to read.
			c.answers.Add(1)
			go func(id uint32) {
				defer c.answers.Done()
				_ = c.write(func() error { return writeErrorResponse(c.enc, id, "phantom serves no requests") })
			}(m.id)
		}
	}
	c.conn.Close()
	c.mu.Lock()
	c.err = fmt.Errorf("%w (%s): %v", ErrClosed, c.path, err)
	for id, ch := range c.pending {
		close(ch)
		delete(c.pending, id)
	}
	c.mu.Unlock()
}
