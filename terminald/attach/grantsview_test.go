package attach

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/terminald/workspace"
)

// fakeGrants is authz's grants and audit log as the grants view sees
// them; a revocation takes the grant out and adds a decision.
type fakeGrants struct {
	mu        sync.Mutex
	grants    []GrantInfo
	decisions []AuditDecision
	revoked   []string // "id pid"
	listErr   error
}

func (f *fakeGrants) List(context.Context) ([]GrantInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.grants), f.listErr
}

func (f *fakeGrants) Revoke(ctx context.Context, id string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	i := slices.IndexFunc(f.grants, func(g GrantInfo) bool { return g.ID == id })
	if i < 0 {
		return "", fmt.Errorf("no grant %s", id)
	}
	f.grants = slices.Delete(f.grants, i, i+1)
	f.revoked = append(f.revoked, fmt.Sprintf("%s %d", id, ClientPID(ctx)))
	f.decisions = append([]AuditDecision{{Time: time.Now(), Outcome: "revoked", What: "grant " + id}}, f.decisions...)
	return "", nil
}

func (f *fakeGrants) Decisions(_ context.Context, n int) ([]AuditDecision, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.decisions[:min(n, len(f.decisions))]), nil
}

func (f *fakeGrants) revocations() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.revoked)
}

func sampleGrants() []GrantInfo {
	return []GrantInfo{
		{ID: "g1", Client: "claude", Program: "/usr/bin/claude", Capability: "run", Scope: ScopeAll, Project: "/src/app", Always: true},
		{ID: "g2", Client: "codex", Capability: "read", Scope: ScopeTab, Call: "read_output of tab t4"},
		{ID: "g3", Client: "gemini", Program: "/usr/bin/gemini", Capability: "read", Scope: ScopeGroup, Always: true, Pending: true},
	}
}

func sampleDecisions(n int) []AuditDecision {
	var out []AuditDecision
	for i := range n {
		out = append(out, AuditDecision{Time: time.Now().Add(-time.Duration(i) * time.Minute), Outcome: "allowed",
			Client: "claude", Tab: "t2", Tool: "run_command", Target: "t3", What: fmt.Sprintf("make test-%d", i)})
	}
	return out
}

// grantsSession is a session with the grants view open and loaded.
func grantsSession(cols, rows int, g []GrantInfo, d []AuditDecision) *session {
	s := &session{o: Options{Prefix: DefaultPrefix, Grants: &fakeGrants{grants: g, decisions: d}}, cols: cols, rows: rows,
		mode: modeGrants, grantsIn: make(chan grantsResult, 1)}
	s.gv = grantsState{loaded: true, grants: g, decisions: d}
	return s
}

// boxText is the box's rows as text.
func boxText(b *sheetBox) string {
	var lines []string
	for _, r := range b.cells {
		var sb strings.Builder
		for _, c := range r {
			sb.WriteString(c.String())
		}
		lines = append(lines, sb.String())
	}
	return strings.Join(lines, "\n")
}

// TestGrantsBoxLayout: the box fits the tab area at every size, always
// shows its keys, shows each grant's program and scope, and keeps the
// highlighted grant in view when the grants do not all fit.
func TestGrantsBoxLayout(t *testing.T) {
	many := make([]GrantInfo, 30)
	for i := range many {
		many[i] = GrantInfo{ID: fmt.Sprintf("g%02d", i), Client: "claude", Program: "/bin/p", Capability: "read", Scope: ScopeTab, Always: true}
	}
	tests := []struct {
		name       string
		cols, rows int
		grants     []GrantInfo
		decisions  []AuditDecision
		prepare    func(s *session)
		want       []string
		notWant    []string
	}{
		{"three grants, decisions", 100, 40, sampleGrants(), sampleDecisions(3), nil,
			[]string{"g1  always  claude may run, scope all", "program /usr/bin/claude · project /src/app", "g2  once  codex may read, scope tab",
				"only read_output of tab t4", "always, PENDING", "Last decisions", "allowed", "claude in t2 run_command → t3: make test-0",
				"d/x revoke", "Esc close"}, nil},
		{"none", 80, 24, nil, nil, nil, []string{"No grants: agents are asked", "no decisions in the audit log yet", "Esc close"}, nil},
		{"loading", 80, 24, nil, nil, func(s *session) { s.gv.loaded = false },
			[]string{"reading the grants…", "reading the audit log…"}, nil},
		{"errors", 80, 24, nil, nil, func(s *session) { s.gv.listErr, s.gv.auditErr = "authz is down", "permission denied" },
			[]string{"cannot list the grants: authz is down", "cannot read the audit log: permission denied"}, nil},
		{"confirm names the grant", 100, 30, sampleGrants(), nil, func(s *session) { s.gv.confirm = "g1" },
			[]string{"revoke g1 (claude may run, scope all)? y revoke"}, []string{"d/x revoke"}},
		{"many grants: the highlighted one shows", 80, 24, many, sampleDecisions(20), func(s *session) { s.gv.chosen = 25 },
			[]string{"g25", "Last decisions", "Esc close"}, []string{"g00"}},
		{"twenty decisions, short screen: a third stays", 80, 24, sampleGrants(), sampleDecisions(20), nil,
			[]string{"g1", "g3", "make test-0", "Esc close"}, []string{"make test-19"}},
		{"tiny", 30, 6, sampleGrants(), sampleDecisions(5), nil, []string{"Esc"}, nil},
		{"narrow: cut, not wrapped", 40, 30, sampleGrants(), nil, nil, []string{"…"}, nil},
		{"agent text made visible", 100, 30,
			[]GrantInfo{{ID: "g1", Client: "evil\x1b]52;c;AAAA\x07", Program: "/bin/\u202eexe", Capability: "run", Scope: ScopeTab, Always: true}},
			[]AuditDecision{{Time: time.Now(), Outcome: "denied", Client: "x\u200by", Tab: "t1\x1b[2J", What: "rm -rf /\r"}}, nil,
			[]string{`evil\x1b]52;c;AAAA\a`, `/bin/\u202eexe`, `x\u200by`, `t1\x1b[2J`, `rm -rf /\r`}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := grantsSession(tt.cols, tt.rows, tt.grants, tt.decisions)
			if tt.prepare != nil {
				tt.prepare(s)
			}
			b := s.grantsBox()
			text := boxText(b)
			if len(b.cells) > tt.rows-1 || b.y+len(b.cells) > tt.rows-1 {
				t.Errorf("the box has %d rows at %d, more than the %d-row area:\n%s", len(b.cells), b.y, tt.rows-1, text)
			}
			for _, r := range b.cells {
				if b.x+len(r) > tt.cols {
					t.Errorf("a row of %d cells at %d is wider than %d:\n%s", len(r), b.x, tt.cols, text)
					break
				}
			}
			for _, w := range tt.want {
				if !strings.Contains(text, w) {
					t.Errorf("the box lacks %q:\n%s", w, text)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(text, w) {
					t.Errorf("the box shows %q:\n%s", w, text)
				}
			}
			for _, r := range text {
				if r < 0x20 && r != '\n' || r == 0x7f || r == 0x202e || r == 0x200b {
					t.Fatalf("the box holds %U, which acts on a terminal:\n%q", r, text)
				}
			}
		})
	}
}

// TestGrantsKeys: which keys move, ask, revoke (only after y, only the
// grant the question named), keep or close.
func TestGrantsKeys(t *testing.T) {
	tests := []struct {
		name     string
		keys     string
		revoke   string // the revocation started; "" for none
		confirm  string // the question left open
		chosen   int
		mode     mode
		wantNote string
	}{
		{"down, x, y revokes the second", "jxy", "g2", "", 1, modeGrants, ""},
		{"arrow down twice, up, d, y", "\x1b[B\x1b[B\x1b[Ad" + "y", "g2", "", 1, modeGrants, ""},
		{"d asks", "d", "", "g1", 0, modeGrants, ""},
		{"d then n keeps", "dn", "", "", 0, modeGrants, "kept g1"},
		{"d then Esc keeps and stays open", "d\x1b", "", "", 0, modeGrants, "kept g1"},
		{"y alone does nothing", "y", "", "", 0, modeGrants, ""},
		{"past the end stays on the last", "jjjjjj", "", "", 2, modeGrants, ""},
		{"up at the top stays", "kk", "", "", 0, modeGrants, ""},
		{"Esc closes", "\x1b", "", "", 0, modeNormal, ""},
		{"q closes", "q", "", "", 0, modeNormal, ""},
		{"the prefix closes", "\x1c", "", "", 0, modeNormal, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := grantsSession(100, 30, sampleGrants(), nil)
			s.o.ClientPID = 4242
			s.grantsKeys([]byte(tt.keys))
			if s.gv.confirm != tt.confirm || s.gv.chosen != tt.chosen || s.mode != tt.mode {
				t.Errorf("confirm %q chosen %d mode %d, want %q %d %d", s.gv.confirm, s.gv.chosen, s.mode, tt.confirm, tt.chosen, tt.mode)
			}
			if tt.wantNote != "" && s.message != tt.wantNote {
				t.Errorf("message %q, want %q", s.message, tt.wantNote)
			}
			var got []string
			if s.gv.revoking != "" {
				r := <-s.grantsIn
				s.bg.Wait()
				s.grantsDone(r)
				got = s.o.Grants.(*fakeGrants).revocations()
			}
			want := []string(nil)
			if tt.revoke != "" {
				want = []string{tt.revoke + " 4242"}
			}
			if !slices.Equal(got, want) {
				t.Errorf("revoked %q, want %q", got, want)
			}
			if tt.revoke != "" {
				if s.message != "revoked "+tt.revoke {
					t.Errorf("message %q, want %q", s.message, "revoked "+tt.revoke)
				}
				if slices.ContainsFunc(s.gv.grants, func(g GrantInfo) bool { return g.ID == tt.revoke }) {
					t.Errorf("the view still lists %s after revoking it", tt.revoke)
				}
			}
		})
	}
}

// TestGrantsRevokeWhileReading: a revocation confirmed while a load is
// in flight is not lost: it is sent when the load comes back, even if
// the view closed meanwhile, and one request is in flight at a time.
func TestGrantsRevokeWhileReading(t *testing.T) {
	for _, closeFirst := range []bool{false, true} {
		s := grantsSession(100, 30, sampleGrants(), nil)
		s.o.ClientPID = 9
		s.gv.busy = true // a load in flight
		s.grantsKeys([]byte("dy"))
		if s.gv.queued != "g1" || s.gv.confirm != "" {
			t.Fatalf("queued %q confirm %q after d y while reading, want g1 queued", s.gv.queued, s.gv.confirm)
		}
		if !strings.Contains(boxText(s.grantsBox()), "revoking g1…") {
			t.Errorf("the box does not say g1 is being revoked:\n%s", boxText(s.grantsBox()))
		}
		if closeFirst {
			s.grantsKeys([]byte("q"))
		}
		s.grantsDone(grantsResult{grants: sampleGrants()}) // the load that was in flight
		r := <-s.grantsIn
		s.bg.Wait()
		s.grantsDone(r)
		if got := s.o.Grants.(*fakeGrants).revocations(); !slices.Equal(got, []string{"g1 9"}) {
			t.Errorf("closed %t: revoked %q, want [g1 9]", closeFirst, got)
		}
		if s.message != "revoked g1" || s.gv.busy {
			t.Errorf("closed %t: message %q busy %t", closeFirst, s.message, s.gv.busy)
		}
	}
}

// TestGrantsDoneKeepsHighlight: a reload keeps the highlight on the grant
// it was on, and drops a question about a grant that went meanwhile.
func TestGrantsDoneKeepsHighlight(t *testing.T) {
	s := grantsSession(100, 30, sampleGrants(), nil)
	s.gv.chosen, s.gv.busy = 2, true // g3
	s.grantsDone(grantsResult{grants: sampleGrants()[1:]})
	if s.gv.chosen != 1 {
		t.Errorf("chosen %d after g1 went, want 1 (g3)", s.gv.chosen)
	}
	s.gv.confirm, s.gv.busy = "g2", true
	s.grantsDone(grantsResult{grants: sampleGrants()[2:], listErr: nil})
	if s.gv.confirm != "" {
		t.Errorf("the question about g2 stayed after g2 went")
	}
	s.gv.busy = true
	s.grantsDone(grantsResult{listErr: errors.New("authz is down")})
	if s.gv.listErr != "authz is down" || s.gv.chosen != 0 {
		t.Errorf("listErr %q chosen %d", s.gv.listErr, s.gv.chosen)
	}
}

// TestGrantsViewSession drives the view through a session: prefix g
// opens it, the grant and a decision show, d y revokes it for this
// client's process, and the view reloads without it.
func TestGrantsViewSession(t *testing.T) {
	ws := newWorkspace(t)
	if _, err := ws.Create(workspace.CreateSpec{Directory: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	f := &fakeGrants{grants: sampleGrants()[:1], decisions: sampleDecisions(1)}
	c := startClientWith(t, Options{Workspace: ws, Grants: f, ClientPID: 77}, Hello{Cols: 100, Rows: 30})
	c.waitText("1:")
	c.send("\x1cg")
	c.waitText("program /usr/bin/claude")
	c.waitText("make test-0")
	c.send("d")
	c.waitText("revoke g1 (claude may run, scope all)?")
	c.send("y")
	c.waitText("No grants: agents are asked")
	c.waitText("grant g1")
	if got := f.revocations(); !slices.Equal(got, []string{"g1 77"}) {
		t.Fatalf("revoked %q, want [g1 77]", got)
	}
	c.send("\x1b")
	c.waitNoText("No grants")
}

// TestGrantsViewWithoutAuthz: without authz the key says so.
func TestGrantsViewWithoutAuthz(t *testing.T) {
	ws := newWorkspace(t)
	if _, err := ws.Create(workspace.CreateSpec{Directory: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	c := startClientWith(t, Options{Workspace: ws}, Hello{Cols: 100, Rows: 30})
	c.waitText("1:")
	c.send("\x1cg")
	c.waitText("no grants here")
}
