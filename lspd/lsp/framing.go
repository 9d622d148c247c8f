// Package lsp is a small Language Server Protocol client: JSON-RPC 2.0 over
// a server's stdin and stdout with the base protocol's Content-Length
// framing, and the few protocol types lspd needs.
package lsp

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/textproto"
	"strconv"
	"strings"
)

// MaxMessage bounds one message's body: a server that announces more is
// broken or hostile, and reading it would only exhaust memory.
const MaxMessage = 64 << 20

// maxHeader bounds one header line, for the same reason.
const maxHeader = 4096

// ReadMessage reads one framed message from r: header lines ended by an
// empty line, of which Content-Length is required (Content-Type is
// accepted and ignored), then exactly that many bytes of body.
func ReadMessage(r *bufio.Reader) ([]byte, error) {
	length := -1
	for n := 0; ; n++ {
		line, err := readLine(r)
		if err != nil {
			if n == 0 && errors.Is(err, io.EOF) {
				return nil, io.EOF
			}
			return nil, fmt.Errorf("read header: %w", noEOF(err))
		}
		if line == "" {
			break
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("header line %q has no colon", line)
		}
		switch textproto.CanonicalMIMEHeaderKey(strings.TrimSpace(name)) {
		case "Content-Length":
			v, err := strconv.Atoi(strings.TrimSpace(value))
			if err != nil || v < 0 {
				return nil, fmt.Errorf("bad Content-Length %q", strings.TrimSpace(value))
			}
			if v > MaxMessage {
				return nil, fmt.Errorf("Content-Length %d exceeds the limit of %d bytes", v, MaxMessage)
			}
			length = v
		}
	}
	if length < 0 {
		return nil, errors.New("message without Content-Length")
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, fmt.Errorf("read %d-byte body: %w", length, noEOF(err))
	}
	return body, nil
}

// readLine reads one CRLF- (or LF-) terminated header line; a line cut
// off by the end of input is an error.
func readLine(r *bufio.Reader) (string, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxHeader {
			return "", fmt.Errorf("header line longer than %d bytes", maxHeader)
		}
		switch {
		case err == nil:
			return strings.TrimSuffix(strings.TrimSuffix(string(line), "\n"), "\r"), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(line) > 0:
			return "", io.ErrUnexpectedEOF
		default:
			return "", err
		}
	}
}

// noEOF turns an EOF inside a message into ErrUnexpectedEOF.
func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// WriteMessage writes body to w with its Content-Length header, in one
// Write so that concurrent writers serialised by the caller never
// interleave a header and a body.
func WriteMessage(w io.Writer, body []byte) error {
	msg := make([]byte, 0, len(body)+32)
	msg = append(msg, "Content-Length: "...)
	msg = strconv.AppendInt(msg, int64(len(body)), 10)
	msg = append(msg, "\r\n\r\n"...)
	msg = append(msg, body...)
	_, err := w.Write(msg)
	return err
}
