package authz

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/authz/audit"
	"github.com/phantom-dev/phantom/authz/grants"
	"github.com/phantom-dev/phantom/authz/policy"
	"github.com/phantom-dev/phantom/authz/sheets"
	authzv1 "github.com/phantom-dev/phantom/proto/phantom/authz/v1"
)

// TestActBudget: an agent typing long commands in a loop under a standing
// grant is refused — told why and for how long — once its acts would
// take more of the log than the act budget; nothing refused is typed or
// logged as allowed, what was allowed is logged whole, a command the
// human allows on its sheet still goes, and an hour later the agent may
// act again. Another caller has a bucket of its own, under the shared one.
func TestActBudget(t *testing.T) {
	clock := sheets.NewFakeClock(time.Date(2026, 1, 2, 15, 0, 0, 0, time.UTC))
	a := &fakeAudit{}
	acts := Budget{PerCaller: 100 << 10, All: 150 << 10, SummaryEvery: time.Hour}
	svc := NewService(Options{
		Policy:    policy.New(floodTabs(2), func(_ context.Context, dir string) string { return dir }),
		Grants:    grants.Open(filepath.Join(t.TempDir(), grants.FileName), clock.Now),
		Sheets:    sheets.New(sheets.Options{Clock: clock}),
		Audit:     a,
		ActBudget: acts,
	})
	t.Cleanup(svc.Close)
	if _, err := svc.grants.Add(grants.Grant{Client: "flood", Capability: policy.Run, Scope: policy.Tab, Project: "/src/app", Always: true, Program: testProgram}); err != nil {
		t.Fatal(err)
	}
	typeCmd := func(tab string, i int) *authzv1.AuthorizeResponse {
		cmd := fmt.Sprintf(": %d ", i) + strings.Repeat("x", 8000)
		resp, err := svc.Authorize(context.Background(), call("c-"+tab, tab, "run_command", map[string]string{"terminal_id": tab, "command": cmd}))
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	allowed := 0
	var refused *authzv1.AuthorizeResponse
	for i := range 100 {
		if r := typeCmd("f0", i); r.GetAllowed() {
			allowed++
		} else {
			refused = r
			break
		}
	}
	if refused == nil || allowed < 5 || allowed > int(acts.PerCaller/8000) {
		t.Fatalf("%d commands allowed, then %v; want the act budget to refuse after a dozen", allowed, refused)
	}
	for _, w := range []string{"refused: tab f0 is over the audit log's budget for acts", "push older records out", "100 KiB", "Wait about", "ask the human"} {
		if !strings.Contains(refused.GetReason(), w) {
			t.Errorf("refusal %q does not say %q", refused.GetReason(), w)
		}
	}
	// Another tab has its own bucket, until the shared one runs out.
	other := 0
	for i := range 100 {
		if !typeCmd("f1", i).GetAllowed() {
			break
		}
		other++
	}
	if other == 0 || allowed+other > int(acts.All/8000) {
		t.Errorf("tab f1: %d allowed after tab f0's %d; want some, and no more than the shared bucket holds", other, allowed)
	}
	// The human allows one on its sheet: it goes, whatever the budget.
	ch := make(chan *authzv1.AuthorizeResponse, 1)
	go func() {
		resp, _ := svc.Authorize(context.Background(), call("c-f0", "f0", "run_command", map[string]string{"terminal_id": "h1", "command": "make"}))
		ch <- resp
	}()
	var id string
	for id == "" {
		if l := svc.sheets.List(); len(l) > 0 {
			id = l[0].ID
		}
		time.Sleep(time.Millisecond)
	}
	if _, err := svc.AnswerSheet(context.Background(), &authzv1.AnswerSheetRequest{SheetId: id, Decision: authzv1.Decision_DECISION_ONCE}); err != nil {
		t.Fatal(err)
	}
	if r := <-ch; !r.GetAllowed() {
		t.Errorf("the command the human allowed on its sheet was refused: %v", r)
	}
	clock.Advance(time.Hour)
	if r := typeCmd("f0", 1000); !r.GetAllowed() {
		t.Errorf("an hour later: %v", r)
	}
	// What was allowed is logged whole; what was refused is not logged
	// as allowed.
	logged, refusals := 0, 0
	for _, e := range a.events() {
		if e.Event == audit.Allowed && e.Capability == "run" && e.Sheet == "" {
			logged++
			if len(e.Command) < 8000 {
				t.Errorf("an allowed command logged cut: %d bytes", len(e.Command))
			}
		}
		if e.Event == audit.Refused && strings.Contains(e.Reason, "push older records out") {
			refusals++
		}
	}
	if logged != allowed+other+1 || refusals == 0 {
		j, _ := json.Marshal(a.events())
		t.Errorf("%d allowed lines, %d refusals; want %d allowed:\n%.2000s", logged, refusals, allowed+other+1, j)
	}
}
