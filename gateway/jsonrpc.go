package gateway

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// JSON-RPC 2.0 error codes the gateway answers with.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeInternalError  = -32603
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

// request is one incoming JSON-RPC message. ID is the raw id (nil when
// absent: a notification); HasMethod tells requests from stray responses.
type request struct {
	ID     json.RawMessage
	Method string
	Params json.RawMessage
}

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("%s (%d)", e.Message, e.Code) }

// nullID is the id of a response to a message whose id could not be read.
var nullID = json.RawMessage("null")

// parseMessage reads one line as a JSON-RPC 2.0 message. It returns the
// request, or a response to send back (with the id when it was readable),
// or neither for a line to ignore (blank lines, responses from the client,
// which the gateway never asks for).
func parseMessage(line []byte) (req *request, errResp *response) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil, nil
	}
	if line[0] == '[' {
		if !json.Valid(line) {
			return nil, errorResponse(nullID, codeParseError, "parse error: the line is not valid JSON")
		}
		return nil, errorResponse(nullID, codeInvalidRequest, "invalid request: batches are not supported by MCP 2025-06-18; send one message per line")
	}
	var raw struct {
		JSONRPC *string         `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"` // "null" when null, nil when absent
		Method  *string         `json:"method"`
		Params  json.RawMessage `json:"params"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(line, &raw); err != nil {
		if !json.Valid(line) {
			return nil, errorResponse(nullID, codeParseError, "parse error: the line is not valid JSON")
		}
		return nil, errorResponse(nullID, codeInvalidRequest, "invalid request: a message must be a JSON object")
	}
	id := nullID
	idOK := false
	if raw.ID != nil && validID(raw.ID) {
		id, idOK = raw.ID, true
	}
	if raw.JSONRPC == nil || *raw.JSONRPC != "2.0" {
		return nil, errorResponse(id, codeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`)
	}
	if raw.Method == nil {
		if raw.Result != nil || raw.Error != nil {
			return nil, nil // a response; we send no requests, so drop it
		}
		return nil, errorResponse(id, codeInvalidRequest, `invalid request: no "method"`)
	}
	if raw.ID != nil && !idOK {
		return nil, errorResponse(nullID, codeInvalidRequest, "invalid request: the id must be a string or an integer")
	}
	if len(raw.Params) > 0 && raw.Params[0] != '{' && raw.Params[0] != '[' && !bytes.Equal(raw.Params, []byte("null")) {
		if raw.ID == nil {
			return nil, nil
		}
		return nil, errorResponse(id, codeInvalidRequest, "invalid request: params must be an object")
	}
	r := &request{Method: *raw.Method, Params: raw.Params}
	if raw.ID != nil {
		r.ID = id
	}
	return r, nil
}

// validID reports whether raw is a JSON string or integer, the ids
// MCP allows (never null, never a fraction).
func validID(raw json.RawMessage) bool {
	if len(raw) == 0 {
		return false
	}
	switch raw[0] {
	case '"':
		var s string
		return json.Unmarshal(raw, &s) == nil
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		_, err := strconv.ParseInt(string(raw), 10, 64)
		return err == nil
	}
	return false
}

// response is one outgoing JSON-RPC response.
type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

func resultResponse(id json.RawMessage, result any) *response {
	return &response{JSONRPC: "2.0", ID: id, Result: result}
}

func errorResponse(id json.RawMessage, code int, msg string) *response {
	return &response{JSONRPC: "2.0", ID: id, Error: &rpcError{Code: code, Message: msg}}
}

// encode renders r as one line, newline included. A result that cannot be
// encoded becomes an internal error, so every request still gets an answer.
func (r *response) encode() []byte {
	b, err := json.Marshal(r)
	if err != nil {
		b, _ = json.Marshal(errorResponse(r.ID, codeInternalError, "internal error: encode result: "+err.Error()))
	}
	return append(b, '\n')
}
