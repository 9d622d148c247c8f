package attach

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/internal/config"
	"github.com/phantom-dev/phantom/terminald/workspace"
)

// TestLimiter checks the rate limit of what a session sends its client.
func TestLimiter(t *testing.T) {
	t0 := time.Unix(1000, 0)
	tests := []struct {
		name string
		at   []time.Duration
		want []bool
	}{
		{"first passes", []time.Duration{0}, []bool{true}},
		{"a flood passes once", []time.Duration{0, 1, 2, ringGap - 1}, []bool{true, false, false, false}},
		{"again after the gap", []time.Duration{0, ringGap, ringGap + 1, 3 * ringGap}, []bool{true, true, false, true}},
		{"a clock stepped back passes", []time.Duration{ringGap, 0}, []bool{true, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var l limiter
			for i, d := range tt.at {
				if got := l.allow(t0.Add(d), ringGap); got != tt.want[i] {
					t.Errorf("event %d at +%v: allow = %v, want %v", i, d, got, tt.want[i])
				}
			}
		})
	}
}

// TestBucket checks the limit of calls: a burst passes, then one per
// interval.
func TestBucket(t *testing.T) {
	t0 := time.Unix(1000, 0)
	ms := time.Millisecond
	tests := []struct {
		name string
		at   []time.Duration
		want []bool
	}{
		{"a burst passes", []time.Duration{0, 1, 2, 3, 4}, []bool{true, true, true, true, true}},
		{"past the burst, dropped", []time.Duration{0, 1, 2, 3, 4, 5, 6}, []bool{true, true, true, true, true, false, false}},
		{"refilled after an interval", []time.Duration{0, 1, 2, 3, 4, 5, callEvery + 5, callEvery + 6}, []bool{true, true, true, true, true, false, true, false}},
		{"waiting then finished, ms apart", []time.Duration{0, 25 * ms}, []bool{true, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bucket
			for i, d := range tt.at {
				if got := b.allow(t0.Add(d), callBurst, callEvery); got != tt.want[i] {
					t.Errorf("call %d at +%v: allow = %v, want %v", i, d, got, tt.want[i])
				}
			}
		})
	}
}

// TestOSC777 checks that agent text cannot end the escape or start
// another: no control characters (C0, DEL, C1), no ';' in the title, one
// line, bounded.
func TestOSC777(t *testing.T) {
	tests := []struct {
		name, title, body, want string
	}{
		{"plain", "Phantom: claude waits", "tab t1: api", "\x1b]777;notify;Phantom: claude waits;tab t1: api\a"},
		{"escapes stripped", "a\x1b]52;c;eA==\ab", "x\x1b[2Jy\u009b1mz\u009c", "\x1b]777;notify;a]52,c,eA==b;x[2Jy1mz\a"},
		{"raw 8-bit C1 bytes become U+FFFD", "a\x9bb", "\x9c", "\x1b]777;notify;a\ufffdb;\ufffd\a"},
		{"title semicolons", "a;b", "c;d", "\x1b]777;notify;a,b;c;d\a"},
		{"newlines and tabs folded", "a\r\nb", "c\td\n\ne", "\x1b]777;notify;ab;cde\a"},
		{"spaces folded", "a  b", "  c   d ", "\x1b]777;notify;a b;c d\a"},
		{"long title cut", strings.Repeat("x", 100), "", "\x1b]777;notify;" + strings.Repeat("x", maxNotifyTitle-1) + "…;\a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(OSC777(tt.title, tt.body)); got != tt.want {
				t.Errorf("OSC777(%q, %q) = %q, want %q", tt.title, tt.body, got, tt.want)
			}
		})
	}
}

// FuzzOSC777: whatever the text, the escape is one OSC ended by its only
// BEL, with no ESC but its start.
func FuzzOSC777(f *testing.F) {
	f.Add("t", "b")
	f.Add("\x1b\\", "\a\x9c\x07")
	f.Fuzz(func(t *testing.T, title, body string) {
		b := OSC777(title, body)
		if strings.Count(string(b), "\x1b") != 1 || strings.Count(string(b), "\a") != 1 || b[len(b)-1] != '\a' {
			t.Fatalf("OSC777(%q, %q) = %q", title, body, b)
		}
		for _, r := range string(b[1 : len(b)-1]) {
			if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
				t.Fatalf("OSC777(%q, %q) = %q holds control %U", title, body, b, r)
			}
		}
	})
}

// TestStatusBellMark checks that a tab that rang is marked, and only it.
func TestStatusBellMark(t *testing.T) {
	tabs := []workspace.Terminal{{ID: "t1", Title: "one", Idle: true}, {ID: "t2", Title: "two", Idle: true}, {ID: "t3", Title: "three", Idle: true}}
	tests := []struct {
		name  string
		bells map[string]bool
		want  []string // titles followed by the mark
	}{
		{"none", nil, nil},
		{"one background tab", map[string]bool{"t2": true}, []string{"two"}},
		{"two", map[string]bool{"t2": true, "t3": true}, []string{"two", "three"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line := cellsText(StatusLine(StatusInfo{Window: "w", Tabs: tabs, Focused: "t1", Bells: tt.bells}, 100))
			if got := strings.Count(line, markBell); got != len(tt.want) {
				t.Fatalf("status %q has %d bell marks, want %d", line, got, len(tt.want))
			}
			for _, title := range tt.want {
				if !strings.Contains(line, title+" "+markBell) {
					t.Errorf("status %q: no mark after %q", line, title)
				}
			}
		})
	}
}

// TestWatcherCalls checks when an agent counts as waiting for input and
// as finished.
func TestWatcherCalls(t *testing.T) {
	t0 := time.Unix(1000, 0)
	const settle = 3 * time.Second
	agentTab := func(st workspace.AgentState) workspace.Terminal {
		return workspace.Terminal{ID: "t1", Title: "api", AgentState: st, AgentClient: "claude", ForegroundName: "claude"}
	}
	type step struct {
		at     time.Duration
		tab    *workspace.Terminal // observed, or nil for a due check
		output time.Duration       // the tab's last output (offset; -1: never)
		want   []CallKind
	}
	tab := func(t workspace.Terminal) *workspace.Terminal { return &t }
	exited := agentTab(workspace.AgentNone)
	exited.Exited, exited.AgentClient = true, ""
	shell := workspace.Terminal{ID: "t1", Title: "sh", ForegroundName: "bash"}
	tests := []struct {
		name  string
		steps []step
	}{
		{"working then idle and quiet: waiting once", []step{
			{0, tab(agentTab(workspace.AgentIdle)), -1, nil},
			{time.Second, tab(agentTab(workspace.AgentWorking)), -1, nil},
			{2 * time.Second, tab(agentTab(workspace.AgentIdle)), -1, nil},
			{4 * time.Second, nil, -1, nil},
			{5 * time.Second, nil, -1, []CallKind{CallWaiting}},
			{9 * time.Second, nil, -1, nil},
		}},
		{"a sheet answered, then idle: waiting", []step{
			{0, tab(agentTab(workspace.AgentWaitingForPermission)), -1, nil},
			{time.Second, tab(agentTab(workspace.AgentIdle)), -1, nil},
			{4 * time.Second, nil, -1, []CallKind{CallWaiting}},
		}},
		{"output keeps it from waiting", []step{
			{0, tab(agentTab(workspace.AgentWorking)), -1, nil},
			{time.Second, tab(agentTab(workspace.AgentIdle)), -1, nil},
			{5 * time.Second, nil, 4 * time.Second, nil},
			{7 * time.Second, nil, 4 * time.Second, []CallKind{CallWaiting}},
		}},
		{"a new call in the settle time: no waiting", []step{
			{0, tab(agentTab(workspace.AgentWorking)), -1, nil},
			{time.Second, tab(agentTab(workspace.AgentIdle)), -1, nil},
			{2 * time.Second, tab(agentTab(workspace.AgentWorking)), -1, nil},
			{10 * time.Second, nil, -1, nil},
		}},
		{"idle without working first: no waiting", []step{
			{0, tab(agentTab(workspace.AgentNone)), -1, nil},
			{time.Second, tab(agentTab(workspace.AgentIdle)), -1, nil},
			{10 * time.Second, nil, -1, nil},
		}},
		{"an agent tab's program exits: finished", []step{
			{0, tab(agentTab(workspace.AgentIdle)), -1, nil},
			{time.Second, tab(exited), -1, []CallKind{CallFinished}},
			{2 * time.Second, tab(exited), -1, nil},
		}},
		{"the agent leaves the shell's foreground: finished", []step{
			{0, tab(shell), -1, nil},
			{time.Second, tab(agentTab(workspace.AgentNone)), -1, nil},
			{2 * time.Second, tab(shell), -1, []CallKind{CallFinished}},
		}},
		{"a shell tab exits: nothing", []step{
			{0, tab(shell), -1, nil},
			{time.Second, tab(workspace.Terminal{ID: "t1", Exited: true}), -1, nil},
		}},
		{"a tab first seen exited: nothing", []step{
			{0, tab(exited), -1, nil},
		}},
	}
	isAgent := func(p string) bool { return p == "claude" }
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWatcher(settle, isAgent)
			for i, st := range tt.steps {
				now := t0.Add(st.at)
				var calls []Call
				if st.tab != nil {
					calls = w.observe(*st.tab, now)
				} else {
					calls = w.due(now, func(string) time.Time {
						if st.output < 0 {
							return time.Time{}
						}
						return t0.Add(st.output)
					})
				}
				var kinds []CallKind
				for _, c := range calls {
					kinds = append(kinds, c.Kind)
					if c.TabID != "t1" || !strings.HasPrefix(c.Title, "Phantom: ") {
						t.Errorf("step %d: call %+v", i, c)
					}
				}
				if len(kinds) != len(st.want) || (len(kinds) > 0 && kinds[0] != st.want[0]) {
					t.Errorf("step %d (+%v): calls %v, want %v", i, st.at, kinds, st.want)
				}
			}
		})
	}
}

// fakeDesktop records desktop notifications.
type fakeDesktop struct {
	mu  sync.Mutex
	got []string
}

func (f *fakeDesktop) Notify(_ context.Context, title, body string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = append(f.got, title+" | "+body)
	return nil
}

func (f *fakeDesktop) all() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.got...)
}

// TestAttentionSheetCalls checks that a new sheet reaches subscribers
// (as config.json's attention.sheet says) and, with attention.desktop on,
// the desktop; a sheet already rung is not rung again.
func TestAttentionSheetCalls(t *testing.T) {
	tests := []struct {
		name        string
		att         config.Attention
		wantRing    config.Ring
		wantDesktop bool
	}{
		{"defaults: bell and notify, no desktop", config.Attention{}, config.Ring{Bell: true, Notify: true}, false},
		{"bell only, desktop on", config.Attention{Sheet: "bell", Desktop: "on"}, config.Ring{Bell: true}, true},
		{"off: nothing, not even the desktop", config.Attention{Sheet: "off", Desktop: "on"}, config.Ring{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := newWorkspace(t)
			cfg := ws.Config()
			cfg.Attention = tt.att
			ws.SetConfig(cfg)
			sheets := newFakeSheets()
			desk := &fakeDesktop{}
			a := NewAttention(ws, sheets, desk)
			calls, stop := a.subscribe()
			defer stop()
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { defer close(done); a.Run(ctx) }()
			defer func() { cancel(); <-done }()
			sheets.push(&Sheet{ID: "s1", Client: "claude\x1b]0;x\a", TabID: "t1", TabTitle: "api", Capability: "run", Tool: "run_command"})
			if tt.wantRing.Off() {
				select {
				case c := <-calls:
					t.Fatalf("a call with the sheet off: %+v", c)
				case <-time.After(300 * time.Millisecond):
				}
				if got := desk.all(); len(got) != 0 {
					t.Fatalf("desktop notified with the sheet off: %q", got)
				}
				return
			}
			var c Call
			select {
			case c = <-calls:
			case <-time.After(10 * time.Second):
				t.Fatal("no call for a new sheet within 10s")
			}
			if c.Kind != CallSheet || c.Ring != tt.wantRing || c.TabID != "t1" {
				t.Errorf("call %+v, want a sheet call ringing %+v", c, tt.wantRing)
			}
			if tt.wantRing.Notify && (!strings.Contains(c.Title, "claude]0,x") || strings.ContainsAny(c.Title+c.Body, "\x1b\a")) {
				t.Errorf("call text %q / %q: want the client's name, sanitized", c.Title, c.Body)
			}
			if tt.wantDesktop {
				deadline := time.Now().Add(10 * time.Second)
				for len(desk.all()) != 1 && time.Now().Before(deadline) {
					time.Sleep(10 * time.Millisecond)
				}
				if got := desk.all(); len(got) != 1 || !strings.Contains(got[0], "asks permission") {
					t.Fatalf("desktop notifications %q, want one for the sheet", got)
				}
			}
			// The same sheet again (a reconnect to authz) rings no more.
			sheets.replace("s1", &Sheet{ID: "s1", Client: "claude"})
			select {
			case c := <-calls:
				t.Fatalf("the same sheet rang again: %+v", c)
			case <-time.After(300 * time.Millisecond):
			}
			if !tt.wantDesktop && len(desk.all()) != 0 {
				t.Errorf("desktop notified with desktop off: %q", desk.all())
			}
		})
	}
}

// TestCallTextKeepsWhatHappened: however long the agent's name and its
// tab's title, a call's title, as notifyText cuts it, ends with what
// happened, and a sheet's body names the tool asked for.
func TestCallTextKeepsWhatHappened(t *testing.T) {
	long := "claude asks permission to read ~/.ssh (answer yes: prefix s) " + strings.Repeat("x", 70)
	w := newWatcher(time.Second, nil)
	tests := []struct {
		name      string
		call      Call
		titleEnd  string
		bodyHolds string
	}{
		{"sheet, short names", sheetCall(&Sheet{Client: "claude", TabTitle: "api", Capability: "read", Tool: "read_output"}),
			" asks permission", "(read_output)"},
		{"sheet, long names", sheetCall(&Sheet{Client: long, TabTitle: long, Capability: "read", Tool: "read_output"}),
			" asks permission", "(read_output)"},
		{"waiting, long name", w.call(CallWaiting, "t1", &agentTrack{name: long, title: long}, "waits for input"),
			" waits for input", "tab t1: "},
		{"finished, long name", w.call(CallFinished, "t1", &agentTrack{name: long, title: long}, "finished"),
			" finished", "tab t1: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			title := notifyText(tt.call.Title, maxNotifyTitle, true)
			body := notifyText(tt.call.Body, maxNotifyBody, false)
			if !strings.HasPrefix(title, "Phantom: ") || !strings.HasSuffix(title, tt.titleEnd) {
				t.Errorf("title %q: want Phantom: … %s", title, tt.titleEnd)
			}
			if !strings.Contains(body, tt.bodyHolds) {
				t.Errorf("body %q: want it to hold %q", body, tt.bodyHolds)
			}
		})
	}
}
