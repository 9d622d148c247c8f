package main

import "encoding/json"

// forgetAliasLocked forgets the alias gw (an id of the bridge's for a
// request of the client's), if it is one.
func (s *session) forgetAliasLocked(gw string) {
	if client, ok := s.aliases[gw]; ok {
		delete(s.aliases, gw)
		if s.aliasOf[canonID(client)] == gw {
			delete(s.aliasOf, canonID(client))
		}
	}
}

// withMember returns the JSON-RPC line with its top-level member key set
// to the JSON value raw, newline-terminated. A line that is not a JSON
// object is returned as it is.
func withMember(line []byte, key, raw string) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(line, &m) != nil {
		return line
	}
	m[key] = json.RawMessage(raw)
	b, err := json.Marshal(m)
	if err != nil {
		return line
	}
	return append(b, '\n')
}

// withRequestID returns a notifications/cancelled line naming request
// raw instead.
func withRequestID(line []byte, raw string) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(line, &m) != nil {
		return line
	}
	params, _ := json.Marshal(map[string]any{"requestId": json.RawMessage(raw)})
	var p map[string]json.RawMessage
	if json.Unmarshal(m["params"], &p) == nil {
		p["requestId"] = json.RawMessage(raw)
		params, _ = json.Marshal(p)
	}
	return withMember(line, "params", string(params))
}
