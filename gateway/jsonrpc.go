package gateway

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// The MCP SDK speaks JSON-RPC; this file is the framing around it: reading
// one line at a time under MaxLine, and telling the lines the SDK should
// see from those the connection answers itself (malformed ones), so that a
// bad line costs the client an error, never the connection.

// JSON-RPC 2.0 error codes the connection answers with itself.
const (
	codeParseError     = jsonrpc.CodeParseError
	codeInvalidRequest = jsonrpc.CodeInvalidRequest
)

// MaxLine bounds one JSON-RPC message: a longer line is answered with an
// error and the connection is closed, since the rest of it cannot be told
// apart from the next message.
const MaxLine = 4 << 20

// errLineTooLong means a line exceeded the reader's limit.
var errLineTooLong = errors.New("line too long")

// readLine reads one newline-terminated line of at most max bytes (the
// newline excluded) from br. At EOF a final unterminated line is returned
// with a nil error; then io.EOF. A longer line yields errLineTooLong after
// at most max+bufsize bytes were read: the caller must close the connection.
func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		n := len(line) + len(chunk)
		if err == nil {
			n-- // the newline
		}
		if n > max {
			return nil, errLineTooLong
		}
		line = append(line, chunk...)
		switch {
		case err == nil:
			return line[:len(line)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(line) > 0:
			return line, nil
		default:
			return nil, err
		}
	}
}

// nullID is the id of a response to a message whose id could not be read.
var nullID = json.RawMessage("null")

// response is an error the connection sends by itself, outside the SDK.
type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   rpcError        `json:"error"`
}

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func errorResponse(id json.RawMessage, code int, msg string) *response {
	return &response{JSONRPC: "2.0", ID: id, Error: rpcError{Code: code, Message: msg}}
}

// encode renders r as one line, newline included.
func (r *response) encode() []byte {
	b, _ := json.Marshal(r) // a raw id that was read as JSON and a string always encode
	return append(b, '\n')
}

// wireMessage is a JSON-RPC message's members as parseLine reads them.
type wireMessage struct {
	JSONRPC *string         `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"` // "null" when null, nil when absent
	Method  *string         `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// parseLine reads one line as a JSON-RPC 2.0 message for the SDK. It
// returns the message, or an error response to send back (with the id
// when it was readable), or neither for a line to ignore (a blank line, a
// notification or response too malformed to act on).
//
// It is stricter than the SDK's decoder where MCP is: an id is a string or
// an integer (never null, a fraction, or an integer a double cannot hold,
// which the SDK would answer under another id), and batches, removed in
// 2025-06-18, are refused.
func parseLine(line []byte) (jsonrpc.Message, *response) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil, nil
	}
	if !json.Valid(line) {
		return nil, errorResponse(nullID, codeParseError, "parse error: the line is not valid JSON")
	}
	if line[0] == '[' {
		return nil, errorResponse(nullID, codeInvalidRequest, "invalid request: batches are not part of MCP since 2025-06-18; send one message per line")
	}
	var raw wireMessage
	if err := json.Unmarshal(line, &raw); err != nil {
		return nil, errorResponse(nullID, codeInvalidRequest, "invalid request: a message must be a JSON object with a string method")
	}
	id := nullID
	idOK := raw.ID != nil && validID(raw.ID)
	if idOK {
		id = raw.ID
	}
	switch {
	case raw.JSONRPC == nil || *raw.JSONRPC != "2.0":
		return nil, errorResponse(id, codeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`)
	case raw.Method == nil && (raw.Result != nil || raw.Error != nil):
		if !idOK {
			return nil, nil // a response to nothing we could have asked
		}
	case raw.Method == nil:
		return nil, errorResponse(id, codeInvalidRequest, `invalid request: no "method"`)
	case raw.ID != nil && !idOK:
		return nil, errorResponse(nullID, codeInvalidRequest, "invalid request: the id must be a string or an integer within ±2^53")
	case len(raw.Params) > 0 && raw.Params[0] != '{' && raw.Params[0] != '[' && !bytes.Equal(raw.Params, []byte("null")):
		if raw.ID == nil {
			return nil, nil
		}
		return nil, errorResponse(id, codeInvalidRequest, "invalid request: params must be an object")
	}
	if req := request(line, &raw); req != nil {
		return req, nil
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		if raw.ID == nil {
			return nil, nil
		}
		return nil, errorResponse(id, codeInvalidRequest, "invalid request: "+err.Error())
	}
	return msg, nil
}

// request builds the SDK's request from a line parseLine has checked,
// sparing the SDK's decoder: it allocates a 32 KiB buffer for each of its
// two passes over a line, most of the gateway's garbage per call. It is
// nil, and DecodeMessage reads the line, unless the line is a request or
// notification both decoders read alike: an object of string method, its
// id checked, params absent or an object, no result or error, and each
// member named once in its exact case (encoding/json also takes "Method",
// the SDK's decoder does not).
func request(line []byte, raw *wireMessage) *jsonrpc.Request {
	if raw.Method == nil || raw.Result != nil || raw.Error != nil ||
		(raw.Params != nil && raw.Params[0] != '{') || !plainMembers(line) {
		return nil
	}
	req := &jsonrpc.Request{Method: *raw.Method, Params: raw.Params}
	id := raw.ID
	if id == nil {
		return req
	}
	var err error
	if id[0] == '"' {
		var s string
		err = json.Unmarshal(id, &s)
		req.ID, _ = jsonrpc.MakeID(s)
	} else {
		var n int64
		n, err = strconv.ParseInt(string(id), 10, 64)
		req.ID, _ = jsonrpc.MakeID(float64(n)) // as the SDK reads it: a double
	}
	if err != nil {
		return nil
	}
	return req
}

// wireMembers are the members of a JSON-RPC message the decoders read.
var wireMembers = [...]string{"jsonrpc", "id", "method", "params", "result", "error"}

// plainMembers reports whether every member of the object line that names
// one of wireMembers, case ignored, names it exactly and only once.
func plainMembers(line []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(line))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return false
	}
	var seen [len(wireMembers)]bool
	for dec.More() {
		t, err := dec.Token()
		key, ok := t.(string)
		if err != nil || !ok {
			return false
		}
		for i, m := range wireMembers {
			if strings.EqualFold(key, m) {
				if key != m || seen[i] {
					return false
				}
				seen[i] = true
			}
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return false
		}
	}
	return true
}

// maxExactID is the largest integer id the SDK (which reads ids as
// doubles) answers under the same id.
const maxExactID = 1<<53 - 1

// validID reports whether raw is a JSON string, or an integer the SDK
// keeps exact: the ids MCP allows (never null, never a fraction).
func validID(raw json.RawMessage) bool {
	if len(raw) == 0 {
		return false
	}
	switch raw[0] {
	case '"':
		var s string
		return json.Unmarshal(raw, &s) == nil
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		n, err := strconv.ParseInt(string(raw), 10, 64)
		return err == nil && n >= -maxExactID && n <= maxExactID
	}
	return false
}

// rawID renders an SDK id as JSON, for the errors the connection sends.
func rawID(id jsonrpc.ID) json.RawMessage {
	b, err := json.Marshal(id.Raw())
	if err != nil || !id.IsValid() {
		return nullID
	}
	return b
}
