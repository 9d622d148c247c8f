package servers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/phantom-dev/phantom/lspd/lsp"
)

// A server that hangs while its process lives (a deadlock, a stopped
// process) is noticed by no exit and, for push-only servers, by no
// request timing out: lspd only tells them things. So when a document
// version was sent and the server has said nothing since — no diagnostics,
// no progress, nothing — for Options.Unheard, lspd asks it for that
// document's symbols. Every server answers that quickly (gopls, clangd and
// pylsp in milliseconds on a small file; one without symbols answers with
// an error, which is an answer too), and since servers handle messages in
// order, the answer also shows the change before it was taken in. No
// answer within Options.RequestTimeout and the process group is killed;
// the supervisor restarts it with backoff.

// heardNow records that the process said something.
func (s *Server) heardNow() {
	s.mu.Lock()
	s.heard = time.Now()
	s.mu.Unlock()
}

// probeDue names an open document whose latest version the server has
// been silent about for Unheard, if no probe is out; it marks one out.
func (s *Server) probeDue(now time.Time) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.up() || s.probing {
		return "", false
	}
	for p, d := range s.docs {
		if d.open && d.sent.After(s.heard) && now.Sub(d.sent) >= s.reg.opts.Unheard {
			s.probing = true
			s.probes.Add(1)
			return p, true
		}
	}
	return "", false
}

// probe asks inst for path's symbols and kills it if it does not answer
// within RequestTimeout. The wait does not rely on the call returning: a
// stopped process that no longer reads its input blocks the call's write
// once the pipe is full, until the kill closes it.
func (s *Server) probe(inst *instance, path string) {
	defer s.probes.Done()
	timeout := s.reg.opts.RequestTimeout
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	start := time.Now()
	answered := make(chan error, 1)
	go func() {
		answered <- inst.conn.Call(ctx, "textDocument/documentSymbol",
			lsp.DocumentSymbolParams{TextDocument: lsp.TextDocumentIdentifier{URI: lsp.FileURI(path)}}, nil)
	}()
	var err error
	select {
	case err = <-answered:
	case <-ctx.Done():
		err = ctx.Err()
	}
	hung := errors.Is(err, context.DeadlineExceeded)
	s.mu.Lock()
	s.probing = false
	if !hung {
		s.heard = time.Now()
	}
	s.mu.Unlock()
	if hung {
		s.reg.opts.Logger.Warn("language server hangs", "server", s.id, "pid", inst.pid(), "probe", path)
		inst.fail(fmt.Errorf("did not answer textDocument/documentSymbol on %s within %v (asked after %v without a word on its latest version)",
			path, timeout, s.reg.opts.Unheard))
		return
	}
	s.reg.opts.Logger.Debug("language server is alive", "server", s.id, "probe", path, "took", time.Since(start), "answer", err)
}
