package terminald

import (
	"context"

	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// ListEntries lists each window's status-line entries: which tabs share
// an entry's panes and which one it shows. The CLI counts its positions
// in them ("phantom read 2", "main:2"). It is open to processes inside
// Phantom (run.go): the human's `phantom read 2` runs in a tab, and the
// answer holds tab and window ids, which list_terminals gives agents
// anyway, and no name, title or output.
func (s *Service) ListEntries(context.Context, *terminalv1.ListEntriesRequest) (*terminalv1.ListEntriesResponse, error) {
	resp := &terminalv1.ListEntriesResponse{}
	for _, w := range s.ws.Windows() {
		we := &terminalv1.WindowEntries{WindowId: w.ID}
		es, _ := s.ws.Entries(w.ID)
		for _, e := range es {
			we.Entries = append(we.Entries, &terminalv1.StatusEntry{TerminalIds: e.Tabs(), FocusedTerminalId: e.Focused})
		}
		resp.Windows = append(resp.Windows, we)
	}
	return resp, nil
}
