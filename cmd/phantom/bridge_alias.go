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

// maxQueued bounds the client's lines read but not yet sent.
const maxQueued = 256

// queue notes a line of the client's read but not yet sent, and reports
// whether it is to be sent: a cancellation of a request not sent yet is
// not (fromClient drops the request too).
func (s *session) queue(line []byte) bool {
	msg := scanMessage(line)
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case msg.kind == kindRequest:
		s.queued[canonID(msg.id)]++
	case msg.kind == kindNotification && msg.method == "notifications/cancelled":
		if id, ok := cancelledID(line); ok && s.queued[id] > 0 && !s.dropped[id] {
			s.dropped[id] = true
			return false
		}
	}
	return true
}

// unqueueLocked notes that request id is taken to be sent, and reports
// whether the client cancelled it before.
func (s *session) unqueueLocked(id string) (drop bool) {
	if s.queued[id]--; s.queued[id] <= 0 {
		delete(s.queued, id)
	}
	drop = s.dropped[id]
	delete(s.dropped, id)
	return drop
}
