package nvim

import (
	"errors"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

// The three message kinds of msgpack-RPC, the first element of every
// message array.
const (
	kindRequest      = 0
	kindResponse     = 1
	kindNotification = 2
)

// message is one decoded msgpack-RPC message. Params, error and result stay
// raw: only the caller knows what type they should decode into.
type message struct {
	kind   int
	id     uint32             // request and response
	method string             // request and notification
	params msgpack.RawMessage // request and notification
	err    msgpack.RawMessage // response; nil (msgpack nil) on success
	result msgpack.RawMessage // response
}

// readMessage decodes the next message of the stream. A message that is not
// a well-formed msgpack-RPC array is an error: the stream cannot be trusted
// after it, so the caller hangs up.
func readMessage(d *msgpack.Decoder) (message, error) {
	n, err := d.DecodeArrayLen()
	if err != nil {
		return message{}, err
	}
	kind, err := d.DecodeInt()
	if err != nil {
		return message{}, fmt.Errorf("message kind: %w", err)
	}
	m := message{kind: kind}
	switch {
	case kind == kindRequest && n == 4:
		if m.id, err = d.DecodeUint32(); err != nil {
			return m, fmt.Errorf("request id: %w", err)
		}
		if m.method, err = d.DecodeString(); err != nil {
			return m, fmt.Errorf("request method: %w", err)
		}
		m.params, err = d.DecodeRaw()
	case kind == kindResponse && n == 4:
		if m.id, err = d.DecodeUint32(); err != nil {
			return m, fmt.Errorf("response id: %w", err)
		}
		if m.err, err = d.DecodeRaw(); err != nil {
			return m, fmt.Errorf("response error: %w", err)
		}
		m.result, err = d.DecodeRaw()
	case kind == kindNotification && n == 3:
		if m.method, err = d.DecodeString(); err != nil {
			return m, fmt.Errorf("notification method: %w", err)
		}
		m.params, err = d.DecodeRaw()
	default:
		return m, fmt.Errorf("not a msgpack-RPC message: kind %d with %d elements", kind, n)
	}
	return m, err
}

// writeRequest encodes a request.
func writeRequest(e *msgpack.Encoder, id uint32, method string, args []any) error {
	if args == nil {
		args = []any{} // Neovim wants an array, never nil
	}
	return e.Encode([]any{kindRequest, id, method, args})
}

// writeErrorResponse answers a request from Neovim, which this client never
// serves.
func writeErrorResponse(e *msgpack.Encoder, id uint32, msg string) error {
	return e.Encode([]any{kindResponse, id, msg, nil})
}

// Error is an error Neovim returned for a request.
type Error struct {
	// Method is the request's method.
	Method string
	// Message is Neovim's message, e.g. "Vim:E37: No write since last change".
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("neovim %s: %s", e.Method, e.Message) }

// decodeError turns a response's error element into an *Error: Neovim sends
// [type, message]; anything else is shown as it came.
func decodeError(method string, raw msgpack.RawMessage) error {
	var v any
	if err := msgpack.Unmarshal(raw, &v); err != nil {
		return &Error{Method: method, Message: fmt.Sprintf("undecodable error: %v", err)}
	}
	if pair, ok := v.([]any); ok && len(pair) == 2 {
		if s, ok := pair[1].(string); ok {
			return &Error{Method: method, Message: s}
		}
	}
	return &Error{Method: method, Message: fmt.Sprint(v)}
}

// isNil reports whether raw is msgpack's nil.
func isNil(raw msgpack.RawMessage) bool { return len(raw) == 1 && raw[0] == 0xc0 }

// ErrClosed is returned by calls on a client whose connection is gone.
var ErrClosed = errors.New("neovim connection closed")
