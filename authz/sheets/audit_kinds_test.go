package sheets

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/phantom-dev/phantom/authz/policy"
)

// TestRefusalKinds: every refusal says what kind it is and which sheet it
// was (for the audit log), and OnRaised hears of every sheet raised.
func TestRefusalKinds(t *testing.T) {
	need := policy.Need{Tool: "read_output", Capability: policy.Read, Reach: policy.Tab}
	tests := []struct {
		name string
		// act runs the scenario on a queue whose first request (tab t1)
		// is sheet s1; it returns the refusal to check.
		act       func(h *harness, first <-chan result) error
		kind      RefusalKind
		withSheet bool
	}{
		{"denied", func(h *harness, first <-chan result) error {
			h.q.Deny("s1")
			return h.get(first).err
		}, Denied, true},
		{"turned away", func(h *harness, first <-chan result) error {
			h.q.Deny("s1")
			h.get(first)
			return h.get(h.ask(Request{Client: "c", ConnectionID: "x", TabID: "t1", Need: need})).err
		}, TurnedAway, false},
		{"timed out", func(h *harness, first <-chan result) error {
			h.clock.Advance(DefaultTimeout)
			return h.get(first).err
		}, TimedOut, true},
		{"withdrawn", func(h *harness, first <-chan result) error {
			h.q.Withdraw("conn1")
			return h.get(first).err
		}, Withdrawn, true},
		{"shutting down", func(h *harness, first <-chan result) error {
			h.q.Close()
			return h.get(first).err
		}, Withdrawn, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, Options{})
			var mu sync.Mutex
			var raised []string
			h.q.OnRaised(func(s Sheet) {
				mu.Lock()
				defer mu.Unlock()
				raised = append(raised, s.ID)
			})
			first := h.ask(Request{Client: "c", ConnectionID: "conn1", TabID: "t1", Need: need})
			h.waitCounts(1, 0)
			var r *Refusal
			if err := tt.act(h, first); !errors.As(err, &r) {
				t.Fatalf("got %v, want a refusal", err)
			}
			if r.Kind != tt.kind || (r.SheetID != "") != tt.withSheet {
				t.Errorf("refusal %+v, want kind %s with sheet %v", r, tt.kind, tt.withSheet)
			}
			mu.Lock()
			defer mu.Unlock()
			if !slices.Equal(raised, []string{"s1"}) {
				t.Errorf("raised %v, want [s1]", raised)
			}
		})
	}
}

// TestAskSheetNamesTheSheet: an allowed request says which sheet it was;
// one allowed from the backlog by another sheet's grant never was one.
func TestAskSheetNamesTheSheet(t *testing.T) {
	h := newHarness(t, Options{})
	need := policy.Need{Tool: "read_output", Capability: policy.Read, Reach: policy.Tab}
	type res struct{ grant, sheet string }
	ask := func(conn string) <-chan res {
		ch := make(chan res, 1)
		h.wg.Go(func() {
			g, s, _ := h.q.AskSheet(context.Background(), Request{Client: "c", ConnectionID: conn, TabID: "t1", Need: need})
			ch <- res{g, s}
		})
		return ch
	}
	a := ask("a")
	h.waitCounts(1, 0)
	b := ask("b")
	h.waitCounts(1, 1)
	if err := h.q.Allow("s1", func(Sheet) (string, error) { return "g1", nil }); err != nil {
		t.Fatal(err)
	}
	h.q.Settle(func(s Sheet) (string, bool) { return "g1", s.ID == "" || s.ID == "s2" })
	if r := <-a; r != (res{"g1", "s1"}) {
		t.Errorf("first = %+v", r)
	}
	if r := <-b; r.grant != "g1" {
		t.Errorf("second = %+v", r)
	}
}
