package gateway

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// requestLines are lines parseLine passes to the SDK, fast path or not.
var requestLines = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_terminals"}}`,
	`{"jsonrpc":"2.0","id":"a\u0062","method":"tools/list"}`,
	`{"jsonrpc":"2.0","id":-9007199254740991,"method":"ping","params":{}}`,
	`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	`{ "method" : "x" , "params" : { "a" : [1, 2] } , "id" : 7 , "jsonrpc" : "2.0" , "extra": null }`,
	`{"jsonrpc":"2.0","id":2,"Method":"ping","method":"tools/list"}`,
	`{"jsonrpc":"2.0","id":3,"method":"a","method":"b"}`,
	`{"jsonrpc":"2.0","id":4,"method":"ping","params":null}`,
	`{"jsonrpc":"2.0","id":5,"method":"ping","params":[]}`,
	`{"jsonrpc":"2.0","id":6,"method":"ping","error":{"code":1,"message":"m"}}`,
	`{"jsonrpc":"2.0","id":7,"method":""}`,
	`{"jsonrpc":"2.0","id":8,"result":{}}`,
}

// TestParseLineMatchesSDK checks that what parseLine hands the SDK is
// what the SDK's own decoder reads from the line, whichever path built it.
func TestParseLineMatchesSDK(t *testing.T) {
	for _, line := range requestLines {
		matchesSDK(t, []byte(line))
	}
}

func FuzzParseLine(f *testing.F) {
	for _, line := range requestLines {
		f.Add([]byte(line))
	}
	f.Fuzz(matchesSDK)
}

// matchesSDK fails t if parseLine passes the SDK a message other than
// the SDK's decoder reads from line, or one the decoder refuses.
func matchesSDK(t *testing.T, line []byte) {
	got, _ := parseLine(line)
	if got == nil {
		return // answered or ignored by the connection
	}
	want, err := jsonrpc.DecodeMessage(bytes.TrimSpace(line))
	switch {
	case err != nil:
		t.Errorf("%s: passed %#v; the SDK refuses it: %v", line, got, err)
	case !reflect.DeepEqual(got, want):
		t.Errorf("%s:\n got %#v\nwant %#v", line, got, want)
	}
}

// TestPlainMembers checks which lines take the fast path.
func TestPlainMembers(t *testing.T) {
	for line, want := range map[string]bool{
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"name":"x","Method":1}}`: true,
		`{"jsonrpc":"2.0","id":1,"method":"m","other":[{"id":2}]}`:               true,
		`{"jsonrpc":"2.0","id":1,"Method":"m"}`:                                  false,
		`{"jsonrpc":"2.0","ID":1,"method":"m"}`:                                  false,
		`{"jsonrpc":"2.0","id":1,"id":2,"method":"m"}`:                           false,
		`{"jsonrpc":"2.0","id":1,"methoD":"m","method":"m"}`:                     false,
	} {
		if got := plainMembers([]byte(line)); got != want {
			t.Errorf("plainMembers(%s) = %v, want %v", line, got, want)
		}
	}
}
