package daemon

import (
	"fmt"
	"sync"

	"google.golang.org/grpc"
)

// Lazy is a client of another daemon, dialled on first use: a daemon
// that needs terminald for some calls starts, and serves the others,
// while terminald is down. gRPC reconnects by itself after the dial.
type Lazy[C any] struct {
	addr      string
	newClient func(grpc.ClientConnInterface) C

	once   sync.Once
	cc     *grpc.ClientConn
	client C
	err    error
}

// NewLazy reaches the daemon at addr with newClient (a generated
// NewXxxServiceClient).
func NewLazy[C any](addr string, newClient func(grpc.ClientConnInterface) C) *Lazy[C] {
	return &Lazy[C]{addr: addr, newClient: newClient}
}

// Addr is the daemon's address, for messages.
func (l *Lazy[C]) Addr() string { return l.addr }

// Get returns the client, dialling the first time.
func (l *Lazy[C]) Get() (C, error) {
	l.once.Do(func() {
		cc, err := Dial(l.addr)
		if err != nil {
			l.err = err
			return
		}
		l.cc, l.client = cc, l.newClient(cc)
	})
	if l.cc == nil && l.err == nil {
		var zero C
		return zero, fmt.Errorf("the client of %s is closed", l.addr)
	}
	return l.client, l.err
}

// Close hangs up, if dialled; call it once no call is left. Get fails
// afterwards.
func (l *Lazy[C]) Close() {
	l.once.Do(func() {}) // a later Get must not dial
	if l.cc != nil {
		l.cc.Close()
	}
}
