package lsp

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestReadMessage(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []string
		wantErr string
	}{
		{"one", "Content-Length: 2\r\n\r\n{}", []string{"{}"}, ""},
		{"two with content type", "Content-Length: 1\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n1Content-Length: 1\r\n\r\n2", []string{"1", "2"}, ""},
		{"lowercase header, bare LF", "content-length: 3\n\nabc", []string{"abc"}, ""},
		{"empty body", "Content-Length: 0\r\n\r\n", []string{""}, ""},
		{"no length", "Content-Type: x\r\n\r\n{}", nil, "without Content-Length"},
		{"bad length", "Content-Length: -1\r\n\r\n", nil, "bad Content-Length"},
		{"huge length", "Content-Length: 999999999999\r\n\r\n", nil, "exceeds the limit"},
		{"no colon", "Content-Length 2\r\n\r\n{}", nil, "no colon"},
		{"short body", "Content-Length: 10\r\n\r\n{}", nil, "unexpected EOF"},
		{"cut in header", "Content-Len", nil, "unexpected EOF"},
		{"long header", "X: " + strings.Repeat("a", 5000) + "\r\n\r\n", nil, "longer than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := bufio.NewReaderSize(strings.NewReader(tt.in), 16)
			var got []string
			var err error
			for {
				var b []byte
				b, err = ReadMessage(r)
				if err != nil {
					break
				}
				got = append(got, string(b))
			}
			if tt.wantErr == "" {
				if !errors.Is(err, io.EOF) {
					t.Fatalf("ReadMessage(%q) error %v, want a clean EOF", tt.in, err)
				}
			} else if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("ReadMessage(%q) error %v, want one containing %q", tt.in, err, tt.wantErr)
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("ReadMessage(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestWriteReadRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	bodies := []string{`{"jsonrpc":"2.0"}`, "", "ünïcode"}
	for _, b := range bodies {
		if err := WriteMessage(&buf, []byte(b)); err != nil {
			t.Fatal(err)
		}
	}
	r := bufio.NewReader(&buf)
	for _, want := range bodies {
		got, err := ReadMessage(r)
		if err != nil || string(got) != want {
			t.Fatalf("ReadMessage = %q, %v; want %q", got, err, want)
		}
	}
}

// FuzzReadMessage checks the parser never panics, never returns more than
// it was told, and reads back what WriteMessage wrote.
func FuzzReadMessage(f *testing.F) {
	f.Add([]byte("Content-Length: 2\r\n\r\n{}"))
	f.Add([]byte("Content-Length: 5\r\nContent-Type: x\r\n\r\nhello"))
	f.Add([]byte("content-length:0\n\n"))
	f.Add([]byte("Content-Length: 99999999999999999999\r\n\r\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		r := bufio.NewReaderSize(bytes.NewReader(in), 16)
		for range 100 {
			b, err := ReadMessage(r)
			if err != nil {
				break
			}
			if len(b) > len(in) {
				t.Fatalf("body of %d bytes from %d bytes of input", len(b), len(in))
			}
		}
		var buf bytes.Buffer
		if err := WriteMessage(&buf, in); err != nil {
			t.Fatal(err)
		}
		got, err := ReadMessage(bufio.NewReader(&buf))
		if err != nil || !bytes.Equal(got, in) {
			t.Fatalf("round trip of %q = %q, %v", in, got, err)
		}
	})
}
