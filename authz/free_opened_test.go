package authz

import (
	"context"
	"errors"
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

// TestFreeForOpenedTabsAudited: send_keys and close_terminal into a tab
// the caller opened are allowed without a grant or a sheet, and each is
// on disk in the audit log before it acts, with the keys it types; when
// the log cannot be written they are refused. Into the caller's own tab
// or the human's they ask.
func TestFreeForOpenedTabsAudited(t *testing.T) {
	withOpened := append(fakeTabs{{ID: "t4", Title: "tests", Directory: "/src/app", Project: "/src/app", OpenedBy: "t1", Foreground: "sleep"}}, tabs...)
	clock := sheets.NewFakeClock(time.Date(2026, 1, 2, 15, 0, 0, 0, time.UTC))
	a := &fakeAudit{}
	svc := NewService(Options{
		Policy: policy.New(withOpened, func(_ context.Context, dir string) string { return dir }),
		Grants: grants.Open(filepath.Join(t.TempDir(), grants.FileName), clock.Now),
		Sheets: sheets.New(sheets.Options{Clock: clock}),
		Audit:  a,
	})
	t.Cleanup(svc.Close)
	f := &fixture{svc: svc, clock: clock}

	for _, r := range []*authzv1.AuthorizeRequest{
		req("c1", "t1", "send_keys", `{"terminal_id":"t4","keys":["C-c"]}`),
		req("c1", "t1", "close_terminal", `{"terminal_id":"t4"}`),
	} {
		if resp := recv(t, f.authorize(r)); !resp.GetAllowed() || resp.GetGrantId() != "" {
			t.Errorf("%s into the opened tab = %v, want allowed without a grant", r.GetTool(), resp)
		}
	}
	got := a.events()
	if len(got) != 2 || got[0].Event != audit.Allowed || got[0].Tool != "send_keys" || got[0].Command != "\x03" || got[0].Target != "t4" ||
		got[0].Reason != freeReason || got[0].Grant != "" || got[0].Capability != "run" ||
		got[1].Tool != "close_terminal" || got[1].Target != "t4" || got[1].Reason != freeReason {
		t.Errorf("audit = %+v\nwant two allowed lines, free, the first with the keys", got)
	}

	// The caller's own tab and the human's ask.
	for _, r := range []*authzv1.AuthorizeRequest{
		req("c1", "t1", "send_keys", `{"terminal_id":"t1","keys":["C-c"]}`),
		req("c1", "t1", "close_terminal", `{"terminal_id":"t3"}`),
	} {
		ch := f.authorize(r)
		s := f.waitSheets(t, 1)
		if r.GetTool() == "close_terminal" && !strings.Contains(s[0].GetSubject(), "close tab t3 (lib) and end what runs in it") {
			t.Errorf("close_terminal sheet = %q", s[0].GetSubject())
		}
		f.answer(t, s[0].GetId(), authzv1.Decision_DECISION_DENY, 0)
		if resp := recv(t, ch); resp.GetAllowed() {
			t.Errorf("%s allowed after a denial: %v", r.GetTool(), resp)
		}
		clock.Advance(sheets.DefaultTurnAway)
	}

	// No log, no act.
	a.mu.Lock()
	a.failing = errors.New("disk full")
	a.mu.Unlock()
	if resp := recv(t, f.authorize(req("c1", "t1", "send_keys", `{"terminal_id":"t4","keys":["x"]}`))); resp.GetAllowed() ||
		!strings.Contains(resp.GetReason(), "audit log cannot be written") {
		t.Errorf("free send_keys with the log failing = %v, want refused", resp)
	}
}
