package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"
)

const (
	// reconnectWindow bounds how long the bridge keeps trying to reach a
	// gateway that went away before it answers calls with an error: long
	// enough for `phantom up` to bring a crashed gateway back, short
	// enough that an agent is not left waiting on a Phantom that stays
	// down. Calls the agent makes meanwhile wait for the outcome.
	reconnectWindow = 20 * time.Second

	// retryWindow bounds the new attempt each call makes once the bridge
	// gave up: a gateway that came back later is found by the next call.
	retryWindow = 2 * time.Second

	// reconnectMaxDelay caps the backoff between attempts.
	reconnectMaxDelay = time.Second

	// gatewayGoneCode is the JSON-RPC error code of the bridge's own
	// answers: the implementation-defined server-error range.
	gatewayGoneCode = -32000
)

// bridgeTimes are the bridge's bounds; tests shorten them.
type bridgeTimes struct {
	// drain bounds the wait for the gateway's last replies after the
	// client's input ended (see drainTimeout).
	drain time.Duration
	// reconnect bounds the attempts after the gateway went away.
	reconnect time.Duration
	// retry bounds a call's own attempt once the bridge gave up.
	retry time.Duration
}

// bridge connects to tg, sends the hello, waits for acceptance and then
// relays newline-delimited JSON-RPC between the client (stdin, stdout) and
// the gateway, reconnecting when the gateway goes away (see session).
// A refusal or failure of the first connection is returned, for stderr,
// before anything is written to stdout.
func bridge(tg target, client string, drain time.Duration, stdin io.Reader, stdout io.Writer) error {
	return runBridge(tg, client, bridgeTimes{drain: drain, reconnect: reconnectWindow, retry: retryWindow}, stdin, stdout)
}

// session is one bridge: one client on stdio, and a connection to the
// gateway that is replaced when the gateway restarts.
//
// The bridge reads JSON-RPC only as much as reconnection needs: each
// line's top-level "id" and "method". It keeps the client's initialize
// request and whether it sent notifications/initialized; after a new
// connection and hello it replays both (the reply to the replayed
// initialize is swallowed), so the new gateway holds a session the client
// already believes it has, and the client sees nothing. The gateway's
// per-connection state goes with the old connection: "once" permission
// answers, and calls in flight. Those calls — requests sent on the old
// connection and not answered — get a JSON-RPC error from the bridge
// itself saying the gateway went away, while the client still waits for
// them: not a call it cancelled (notifications/cancelled), nor one in
// flight when it closed its input. A cancelled request gets no response
// at all, as the MCP spec says: the bridge drops the gateway's answer to
// it too, should one come, and progress notifications about it; a request
// cancelled before the bridge could send it (while it reconnects) is
// never sent. A request reusing the id of a cancelled one goes to the
// gateway under an id of the bridge's, so that the cancelled call's late
// answer is not taken for its own. Requests the client sends while
// the bridge reconnects wait; if the gateway stays away past the bounds,
// they are answered with an error naming the socket and `phantom up`.
//
// Lines that are not JSON-RPC pass through untouched.
type session struct {
	tg     target
	client string
	times  bridgeTimes

	outMu sync.Mutex
	out   io.Writer

	mu   sync.Mutex
	cond *sync.Cond
	// conn is the live connection; nil while there is none.
	conn *gwConn
	// gen numbers connections; requests in flight are tagged with the
	// connection they were sent on.
	gen int
	// reconnecting is true while an attempt is under way.
	reconnecting bool
	// downErr is why the last reconnection failed.
	downErr error
	// inputDone is set once the client's input ended: no reconnecting
	// after that.
	inputDone bool
	// initReq is the client's initialize request line, once the gateway
	// accepted it; initialized is its notifications/initialized line.
	// pendingInit and pendingInitID are an initialize not answered yet.
	initReq, initialized, pendingInit []byte
	pendingInitID                     string
	// inflight maps the id of each request of the client not yet
	// answered to the connection it went on; serverReqs the same for the
	// gateway's requests to the client.
	inflight, serverReqs map[string]int
	// cancelled maps the id of each request the client cancelled while
	// in flight to the connection it went on: its answer is dropped.
	cancelled map[string]int
	// queued counts the requests of the client read but not yet sent,
	// by id; dropped are those of them it cancelled meanwhile.
	queued  map[string]int
	dropped map[string]bool
	// aliases maps the id under which the bridge sent a request to the
	// gateway, when it is not the client's, to the client's id as
	// written; aliasOf maps the client's (canonical) id to it. A client
	// that reuses the id of a call it cancelled gets its new call sent
	// under an id of the bridge's, so that the gateway's late answer to
	// the cancelled call is not taken for the new call's.
	aliases, aliasOf map[string]string
	nextAlias        int
	// tokens maps the progressToken of each request in flight that has
	// one to its id, so that progress about a cancelled request is
	// dropped too; tokenOf is the other way.
	tokens, tokenOf map[string]string
	// fatal ends the bridge: the client's stdout broke, or a restarted
	// gateway refused the bridge.
	fatal     error
	fatalDone chan struct{}
}

// gwConn is one connection to the gateway, after its hello.
type gwConn struct {
	c   *net.UnixConn
	br  *bufio.Reader
	gen int
	// done is closed once its reader ended; err is how (nil for EOF).
	done chan struct{}
	err  error
}

// runBridge is bridge with its bounds given. It returns when the client's
// input ended and the gateway closed its side (nil, or how reading the
// input or the gateway failed), or on a fatal error.
func runBridge(tg target, client string, times bridgeTimes, stdin io.Reader, stdout io.Writer) error {
	s := &session{tg: tg, client: client, times: times, out: stdout,
		inflight: map[string]int{}, serverReqs: map[string]int{}, cancelled: map[string]int{},
		queued: map[string]int{}, dropped: map[string]bool{},
		aliases: map[string]string{}, aliasOf: map[string]string{},
		tokens: map[string]string{}, tokenOf: map[string]string{}, fatalDone: make(chan struct{})}
	s.cond = sync.NewCond(&s.mu)
	gc, err := s.connect()
	if err != nil {
		return err
	}
	s.conn = gc
	go s.readGateway(gc)

	inputEnd := make(chan error, 1)
	go func() { inputEnd <- s.readClient(stdin) }()
	var inErr error
	select {
	case inErr = <-inputEnd:
	case <-s.fatalDone:
		return s.fatalErr()
	}

	// The client's input ended — an MCP client closes it to say it is
	// done, often right after writing its last requests. Tell the gateway
	// (half-close), then deliver what it still has to say until it
	// closes its side: every request sent gets its answer. If it has not
	// closed within drain, give up.
	s.mu.Lock()
	s.inputDone = true
	gc = s.conn
	s.cond.Broadcast()
	s.mu.Unlock()
	if gc == nil {
		// No connection: calls in flight were answered when it broke.
		if err := s.fatalErr(); err != nil {
			return err
		}
		return inputError(inErr)
	}
	gc.c.CloseWrite()
	timer := time.NewTimer(s.times.drain)
	defer timer.Stop()
	select {
	case <-gc.done:
	case <-s.fatalDone:
		gc.c.Close()
		<-gc.done
		return s.fatalErr()
	case <-timer.C:
		gc.c.Close() // unblocks the reader
		<-gc.done
		return fmt.Errorf("gave up after %s waiting for the gateway to answer and close the connection; replies may be missing", s.times.drain)
	}
	if err := s.fatalErr(); err != nil {
		return err
	}
	if gc.err != nil {
		return fmt.Errorf("lost the connection to the gateway: %w", gc.err)
	}
	return inputError(inErr)
}

func inputError(err error) error {
	if err != nil {
		return fmt.Errorf("read the client's input: %w", err)
	}
	return nil
}

// connect dials the gateway, sends the hello and, on a reconnection,
// replays the client's initialization. It returns the connection, not yet
// installed.
func (s *session) connect() (*gwConn, error) {
	conn, err := s.tg.dial()
	if err != nil {
		return nil, err
	}
	br, err := handshake(conn, s.client, s.tg.tabState)
	if err != nil {
		conn.Close()
		return nil, err
	}
	s.mu.Lock()
	s.gen++
	gc := &gwConn{c: conn, br: br, gen: s.gen, done: make(chan struct{})}
	initReq, initialized := s.initReq, s.initialized
	s.mu.Unlock()
	if initReq != nil {
		if err := s.replayInit(gc, initReq, initialized); err != nil {
			conn.Close()
			return nil, err
		}
	}
	return gc, nil
}

// replayInit sends the client's initialize request again under an id of
// the bridge's own, reads up to its reply (passing on anything else the
// gateway says meanwhile), then the client's notifications/initialized.
func (s *session) replayInit(gc *gwConn, initReq, initialized []byte) error {
	id := fmt.Sprintf(`"phantom-bridge-reinit-%d"`, gc.gen)
	var m map[string]json.RawMessage
	if err := json.Unmarshal(initReq, &m); err != nil {
		return fmt.Errorf("replay the client's initialize request: %w", err)
	}
	m["id"] = json.RawMessage(id)
	req, _ := json.Marshal(m)
	gc.c.SetDeadline(time.Now().Add(helloTimeout))
	defer gc.c.SetDeadline(time.Time{})
	if _, err := gc.c.Write(append(req, '\n')); err != nil {
		return fmt.Errorf("replay the client's initialize request to %s: %w", s.tg.socket, err)
	}
	var line []byte
	for {
		l, err := readLine(gc.br, &line)
		if len(l) > 0 {
			msg := scanMessage(l)
			if msg.kind == kindResponse && msg.id == id {
				if msg.isError {
					return fmt.Errorf("the restarted gateway refused to initialize the session again: %s", bytes.TrimSpace(l))
				}
				break
			}
			if err := s.fromGateway(gc, l); err != nil {
				return err
			}
		}
		if err != nil {
			return fmt.Errorf("the gateway closed the connection while the session was initialized again (%v)", err)
		}
	}
	if initialized != nil {
		if _, err := gc.c.Write(initialized); err != nil {
			return fmt.Errorf("replay the client's notifications/initialized to %s: %w", s.tg.socket, err)
		}
	}
	return nil
}

// readClient relays the client's lines until its input ends. It reads
// on while a line waits to be sent (the bridge reconnecting), so that a
// cancellation of a request not sent yet is seen: neither is sent, and
// the request gets no answer.
func (s *session) readClient(stdin io.Reader) error {
	lines := make(chan []byte, maxQueued)
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		for line := range lines {
			if s.fromClient(line) != nil {
				for range lines { // fatal: runBridge returns it
				}
				return
			}
		}
	}()
	defer func() { close(lines); <-sent }()
	br := bufio.NewReaderSize(stdin, 64<<10)
	var buf []byte
	for {
		line, err := readLine(br, &buf)
		if len(line) > 0 && s.queue(line) {
			select {
			case lines <- bytes.Clone(line):
			case <-s.fatalDone:
				return nil
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// fromClient sends one line of the client's to the gateway, waiting for a
// connection while the bridge reconnects.
func (s *session) fromClient(line []byte) error {
	msg := scanMessage(line)
	s.mu.Lock()
	retried := false
	for s.conn == nil && s.fatal == nil {
		if !s.reconnecting {
			// The bridge gave up earlier: this line tries once more, so a
			// gateway that came back since is found.
			if retried {
				break
			}
			retried = true
			s.reconnecting = true
			go s.reconnect(s.times.retry)
		}
		s.cond.Wait()
	}
	if msg.kind == kindRequest && s.unqueueLocked(canonID(msg.id)) {
		s.mu.Unlock()
		return nil // cancelled before it was sent
	}
	if s.fatal != nil {
		err := s.fatal
		s.mu.Unlock()
		if msg.kind == kindRequest {
			s.answerError(msg.id, fmt.Sprintf("this call was not made: %v", err))
		}
		return err
	}
	gc := s.conn
	if gc == nil {
		down := s.downErr
		s.mu.Unlock()
		if down == nil {
			down = fmt.Errorf("cannot reach Phantom's MCP socket %s — is Phantom running? start it with `phantom up`", s.tg.socket)
		}
		if msg.kind == kindRequest {
			return s.answerError(msg.id, fmt.Sprintf("Phantom's gateway is not reachable, so this call was not made: %v (the bridge reconnects by itself once Phantom is back)", down))
		}
		return nil
	}
	switch msg.kind {
	case kindRequest:
		if msg.method == "initialize" {
			s.pendingInit, s.pendingInitID = bytes.Clone(line), msg.id
		}
		id := canonID(msg.id)
		s.inflight[id] = gc.gen
		s.forgetAliasLocked(s.aliasOf[id])
		gw := id
		if _, ok := s.cancelled[id]; ok {
			// The id of a cancelled call whose answer may still come.
			s.nextAlias++
			gw = fmt.Sprintf(`"phantom-bridge-reused-%d"`, s.nextAlias)
			s.aliases[gw], s.aliasOf[id] = msg.id, gw
			line = withMember(line, "id", gw)
		}
		s.forgetTokenLocked(gw)
		if tok, ok := progressToken(line, "_meta"); ok {
			s.tokens[tok], s.tokenOf[gw] = gw, tok
		}
	case kindNotification:
		switch msg.method {
		case "notifications/initialized":
			s.initialized = bytes.Clone(line)
		case "notifications/cancelled":
			// Passed on, so that the gateway stops the call; whatever
			// answer still comes is dropped.
			if id, ok := cancelledID(line); ok {
				if gen, ok := s.inflight[id]; ok {
					delete(s.inflight, id)
					if gw, ok := s.aliasOf[id]; ok {
						delete(s.aliasOf, id)
						id = gw
						line = withRequestID(line, gw)
					}
					s.keepCancelledLocked(id, gen)
				}
			}
		}
	case kindResponse:
		// An answer to a request of the gateway's: only the connection
		// that asked can take it.
		if gen, ok := s.serverReqs[msg.id]; !ok || gen != gc.gen {
			s.mu.Unlock()
			return nil
		}
		delete(s.serverReqs, msg.id)
	}
	s.mu.Unlock()
	if _, err := gc.c.Write(line); err != nil {
		// The reader sees the end too and answers what was in flight,
		// this line included.
		gc.c.Close()
	}
	return nil
}

// readGateway relays the gateway's lines to the client until the
// connection ends, then handles the loss.
func (s *session) readGateway(gc *gwConn) {
	var buf []byte
	for {
		line, err := readLine(gc.br, &buf)
		if len(line) > 0 {
			if ferr := s.fromGateway(gc, line); ferr != nil {
				err = ferr
			}
		}
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			s.lost(gc, err)
			return
		}
	}
}

// fromGateway passes one line of the gateway's to the client.
func (s *session) fromGateway(gc *gwConn, line []byte) error {
	msg := scanMessage(line)
	switch msg.kind {
	case kindResponse:
		id := canonID(msg.id)
		s.mu.Lock()
		s.forgetTokenLocked(id)
		if _, ok := s.cancelled[id]; ok {
			delete(s.cancelled, id)
			delete(s.aliases, id)
			s.mu.Unlock()
			return nil // the client cancelled it: no response
		}
		if client, ok := s.aliases[id]; ok {
			s.forgetAliasLocked(id)
			msg.id, id = client, canonID(client)
			line = withMember(line, "id", client)
		}
		delete(s.inflight, id)
		if s.pendingInit != nil && msg.id == s.pendingInitID {
			// Replayed on a new connection only once it succeeded here.
			if !msg.isError {
				s.initReq = s.pendingInit
			}
			s.pendingInit, s.pendingInitID = nil, ""
		}
		s.mu.Unlock()
	case kindRequest:
		s.mu.Lock()
		s.serverReqs[msg.id] = gc.gen
		s.mu.Unlock()
	case kindNotification:
		if msg.method == "notifications/progress" {
			if tok, ok := progressToken(line, ""); ok {
				s.mu.Lock()
				_, cancelled := s.cancelled[s.tokens[tok]]
				s.mu.Unlock()
				if cancelled {
					return nil // about a call the client cancelled
				}
			}
		}
	}
	return s.write(line)
}

// lost handles the end of gc: answers the calls in flight on it, and
// reconnects unless the client's input ended.
func (s *session) lost(gc *gwConn, err error) {
	gc.c.Close()
	s.mu.Lock()
	if s.conn == gc {
		s.conn = nil
	}
	var ids []string
	for id, gen := range s.inflight {
		if gen == gc.gen {
			ids = append(ids, id)
			delete(s.inflight, id)
		}
	}
	for id, gen := range s.serverReqs {
		if gen == gc.gen {
			delete(s.serverReqs, id)
		}
	}
	for id, gen := range s.cancelled {
		if gen == gc.gen {
			delete(s.cancelled, id)
			delete(s.aliases, id)
			s.forgetTokenLocked(id)
		}
	}
	for _, id := range ids {
		if gw, ok := s.aliasOf[id]; ok {
			s.forgetAliasLocked(gw)
			s.forgetTokenLocked(gw)
		}
		s.forgetTokenLocked(id)
	}
	if s.inputDone {
		// The client closed its input: it abandoned these calls, and
		// "make the call again" would be said to no one.
		ids = nil
	}
	again := !s.inputDone && s.fatal == nil && !s.reconnecting
	if again {
		s.reconnecting = true
	}
	s.mu.Unlock()
	for _, id := range ids {
		s.answerError(id, "Phantom's gateway went away (it stopped or restarted) while this call was in flight, so it may or may not have run; the bridge reconnects by itself: make the call again")
	}
	gc.err = err
	close(gc.done)
	if again {
		s.reconnect(s.times.reconnect)
	}
}

// reconnect tries, with backoff, for up to window to connect again, and
// installs the new connection. Call it with s.reconnecting set.
func (s *session) reconnect(window time.Duration) {
	deadline := time.Now().Add(window)
	delay := 50 * time.Millisecond
	for {
		s.mu.Lock()
		stop := s.inputDone || s.fatal != nil
		s.mu.Unlock()
		if stop {
			break
		}
		gc, err := s.connect()
		if err == nil {
			s.mu.Lock()
			if s.inputDone || s.fatal != nil {
				s.mu.Unlock()
				gc.c.Close()
				break
			}
			s.conn, s.reconnecting, s.downErr = gc, false, nil
			s.cond.Broadcast()
			s.mu.Unlock()
			go s.readGateway(gc)
			return
		}
		var refused *helloRefusal
		if errors.As(err, &refused) && refused.permanent() {
			s.setFatal(err)
			break
		}
		if time.Now().Add(delay).After(deadline) {
			s.mu.Lock()
			s.downErr = err
			s.mu.Unlock()
			break
		}
		time.Sleep(delay)
		delay = min(delay*2, reconnectMaxDelay)
	}
	s.mu.Lock()
	s.reconnecting = false
	s.cond.Broadcast()
	s.mu.Unlock()
}

// answerError answers the client's request id with a JSON-RPC error of
// the bridge's own.
func (s *session) answerError(id, message string) error {
	b, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"id":      json.RawMessage(id),
		"error":   map[string]any{"code": gatewayGoneCode, "message": message},
	})
	return s.write(append(b, '\n'))
}

// write writes one line to the client; a failure ends the bridge.
func (s *session) write(line []byte) error {
	s.outMu.Lock()
	_, err := s.out.Write(line)
	s.outMu.Unlock()
	if err != nil {
		err = fmt.Errorf("write to the client's stdout: %w", err)
		s.setFatal(err)
	}
	return err
}

func (s *session) setFatal(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fatal == nil {
		s.fatal = err
		close(s.fatalDone)
		s.cond.Broadcast()
	}
}

func (s *session) fatalErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fatal
}

// readLine reads one line, its newline included (none at the end of
// input), of any length. The slice is valid until the next call; buf is
// scratch space kept between calls.
func readLine(br *bufio.Reader, buf *[]byte) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if err != bufio.ErrBufferFull {
		return line, err
	}
	*buf = append((*buf)[:0], line...)
	for err == bufio.ErrBufferFull {
		line, err = br.ReadSlice('\n')
		*buf = append(*buf, line...)
	}
	return *buf, err
}

// maxCancelled bounds the cancelled calls the bridge remembers: the
// gateway answers none of them, so each stays until its connection ends.
const maxCancelled = 4096

// keepCancelledLocked remembers that the client cancelled request id, in
// flight on connection gen, forgetting another cancelled call (whose
// answer may then come through: the gateway sends none) past
// maxCancelled.
func (s *session) keepCancelledLocked(id string, gen int) {
	for old := range s.cancelled {
		if len(s.cancelled) < maxCancelled {
			break
		}
		delete(s.cancelled, old)
		delete(s.aliases, old)
		s.forgetTokenLocked(old)
	}
	s.cancelled[id] = gen
}

// forgetTokenLocked forgets the progressToken of request id, if it has
// one.
func (s *session) forgetTokenLocked(id string) {
	if tok, ok := s.tokenOf[id]; ok {
		delete(s.tokens, tok)
		delete(s.tokenOf, id)
	}
}

// progressToken returns the canonical progressToken (canonID) of a
// request (in params._meta, meta "_meta") or of a notifications/progress
// (in params, meta ""). Only lines that mention one are decoded.
func progressToken(line []byte, meta string) (string, bool) {
	if !bytes.Contains(line, []byte(`"progressToken"`)) {
		return "", false
	}
	var m struct {
		Params map[string]json.RawMessage `json:"params"`
	}
	if json.Unmarshal(line, &m) != nil {
		return "", false
	}
	p := m.Params
	if meta != "" {
		p = nil
		json.Unmarshal(m.Params[meta], &p)
	}
	tok := p["progressToken"]
	if len(tok) == 0 || string(tok) == "null" {
		return "", false
	}
	return canonID(string(tok)), true
}

// cancelledID returns the canonical id (canonID) of the request a
// notifications/cancelled line names.
func cancelledID(line []byte) (string, bool) {
	var n struct {
		Params struct {
			RequestID json.RawMessage `json:"requestId"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &n) != nil || len(n.Params.RequestID) == 0 {
		return "", false
	}
	return canonID(string(n.Params.RequestID)), true
}

// canonID is one spelling of a JSON-RPC id as written (7, "a"), so that
// a request's id, the id in a notifications/cancelled naming it and the
// id the gateway answers under compare equal however each was escaped or
// written (7 and 7.0, "a" and "\u0061"). Plain ids, the usual kind, are
// returned as they are.
func canonID(raw string) string {
	plain := len(raw) > 0
	for i := 0; i < len(raw) && plain; i++ {
		c := raw[i]
		plain = c >= '0' && c <= '9' || c == '-' && i == 0
	}
	if plain || len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' && !strings.ContainsAny(raw[1:len(raw)-1], `\"`) {
		return raw
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return raw
	}
	if n, ok := v.(json.Number); ok {
		if i, err := n.Int64(); err == nil {
			return strconv.FormatInt(i, 10)
		}
		if f, err := n.Float64(); err == nil && f == float64(int64(f)) {
			return strconv.FormatInt(int64(f), 10)
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return raw
	}
	return string(b)
}

// Kinds of line, by their top-level members.
const (
	kindOther        = iota // not JSON-RPC as far as the bridge can tell
	kindRequest             // "method" and "id"
	kindNotification        // "method", no "id"
	kindResponse            // "result" or "error", and "id"
)

// message is what the bridge reads of a line.
type message struct {
	kind int
	// id is the "id" member as it was written (e.g. 7 or "a"); it is the
	// key of a call in flight.
	id     string
	method string
	// isError is true for a response with "error".
	isError bool
}

// scanMessage reads the top-level "id" and "method" of a JSON-RPC line
// without decoding the rest: a tool result can be megabytes, and the
// bridge only skips over it, at memory speed. A line that is not a JSON
// object is kindOther.
func scanMessage(b []byte) message {
	var m message
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return m
	}
	i++
	var id []byte
	hasMethod, hasResult := false, false
	for {
		i = skipSpace(b, i)
		if i < len(b) && b[i] == '}' {
			break
		}
		if i >= len(b) || b[i] != '"' {
			return message{}
		}
		kEnd := skipString(b, i)
		if kEnd < 0 {
			return message{}
		}
		key := b[i+1 : kEnd-1]
		i = skipSpace(b, kEnd)
		if i >= len(b) || b[i] != ':' {
			return message{}
		}
		i = skipSpace(b, i+1)
		if (string(key) == "result" || string(key) == "error") && id != nil && !hasMethod {
			// A response whose id came first, as the go-sdk writes them:
			// the result, maybe megabytes, need not be read.
			hasResult, m.isError = true, string(key) == "error"
			break
		}
		vEnd := skipValue(b, i)
		if vEnd < 0 {
			return message{}
		}
		switch string(key) {
		case "id":
			id = b[i:vEnd]
		case "method":
			hasMethod = true
			json.Unmarshal(b[i:vEnd], &m.method)
		case "result":
			hasResult = true
		case "error":
			hasResult, m.isError = true, true
		}

		i = skipSpace(b, vEnd)
		if i < len(b) && b[i] == ',' {
			i++
			continue
		}
		if i < len(b) && b[i] == '}' {
			break
		}
		return message{}
	}
	hasID := id != nil && string(id) != "null"
	switch {
	case hasMethod && hasID:
		m.kind = kindRequest
	case hasMethod:
		m.kind = kindNotification
	case hasResult && hasID:
		m.kind = kindResponse
	default:
		return message{}
	}
	if hasID {
		m.id = string(id)
	}
	return m
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// skipString returns the index just past the string starting at b[i]
// (a '"'), or -1 if it does not end.
func skipString(b []byte, i int) int {
	start := i + 1
	for i = start; ; {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return -1
		}
		q := i + j
		// The quote ends the string unless an odd number of
		// backslashes escapes it.
		n := 0
		for p := q - 1; p >= start && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return q + 1
		}
		i = q + 1
	}
}

// skipValue returns the index just past the JSON value starting at b[i],
// or -1 if it is malformed as far as skipping can tell.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				if i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	default:
		start := i
	scalar:
		for i < len(b) {
			switch b[i] {
			case ',', '}', ']', ' ', '\t', '\r', '\n':
				break scalar
			}
			i++
		}
		if i == start {
			return -1
		}
		return i
	}
}
