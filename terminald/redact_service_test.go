package terminald

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/phantom-dev/phantom/internal/guard"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// secret is in everything the human's tab says of itself in the tests.
const secret = "sk-live-"

// TestAgentsSeeNoProgramTextOfOtherTabs has the human type a secret
// into a bash tab (a command line, a title set with OSC 2, a directory
// reported with OSC 7) and calls, as an agent in another tab, every
// method of the service that returns a tab: none returns the secret,
// while the agent's own tab and the tabs opened for it keep their last
// commands, and the human still sees it all. The methods are checked
// against the proto, so that one added later is not forgotten.
func TestAgentsSeeNoProgramTextOfOtherTabs(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not installed")
	}
	in := start(t, bash)
	s := NewService(in.ws)
	human := in.create(t, &terminalv1.CreateTerminalRequest{}).GetId()
	own := in.create(t, &terminalv1.CreateTerminalRequest{Name: "agent"}).GetId()
	agentIn := func(tab string) context.Context {
		return guard.NewContext(ctx(t), guard.Caller{Inside: true, ForAgent: true, TabID: tab})
	}
	agent := agentIn(own)
	opened := mustCreate(t, s, agent)
	deeper := mustCreate(t, s, agentIn(opened))
	typeLine := func(tab, line string) {
		t.Helper()
		if _, err := in.c.SendKeys(ctx(t), &terminalv1.SendKeysRequest{TerminalId: tab, Keys: []string{line, "Enter"}}); err != nil {
			t.Fatal(err)
		}
	}
	lastIs := func(tab, cmd string) {
		t.Helper()
		eventually(t, "last command "+cmd+" in tab "+tab, func() (bool, string) {
			tm := in.get(t, tab)
			return tm.GetLastCommand().GetCommand() == cmd && tm.GetIdle(), tm.String()
		})
	}
	for _, tab := range []string{human, own, opened, deeper} {
		in.waitIdle(t, tab)
	}
	typeLine(human, `printf '\033]2;%s\007' `+secret+`TITLE`)
	typeLine(human, "export API_TOKEN="+secret+"SECRET123")
	lastIs(human, "export API_TOKEN="+secret+"SECRET123")
	for _, tab := range []string{own, opened, deeper} {
		// Typed by the agent: the human's keys would make an opened tab
		// the human's (workspace.Adopt).
		if _, err := s.SendKeys(agent, &terminalv1.SendKeysRequest{TerminalId: tab, Keys: []string{"echo mine-" + tab, "Enter"}}); err != nil {
			t.Fatal(err)
		}
		lastIs(tab, "echo mine-"+tab)
	}

	checked := map[string]bool{}
	check := func(method string, m proto.Message) {
		t.Helper()
		checked[method] = true
		if b, _ := proto.Marshal(m); bytes.Contains(b, []byte(secret)) {
			t.Errorf("%s for an agent returned the human's text: %s", method, wireText(m))
		}
	}
	callAll := func(phase string, idle bool) {
		t.Helper()
		list, err := s.ListTerminals(agent, &terminalv1.ListTerminalsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		check("ListTerminals", list)
		got := decoded(t, list)
		for _, tab := range []string{own, opened, deeper} {
			if c := byID(got, tab).GetLastCommand().GetCommand(); c != "echo mine-"+tab {
				t.Errorf("%s: the agent's list shows tab %s's last command as %q, want its own command", phase, tab, c)
			}
		}
		h := byID(got, human)
		if fg := h.GetForegroundProcess().GetName(); h.GetLastCommand() != nil || fg == "" || h.GetTitle() != fg || h.GetDirectory() != in.env.Home {
			t.Errorf("%s: the agent sees the human's tab as %v; want no last command, its foreground program as title, directory %s", phase, h, in.env.Home)
		}
		one, err := s.ListTerminals(agent, &terminalv1.ListTerminalsRequest{TerminalId: human})
		must(t, err)
		check("ListTerminals", one)
		r1, err := s.FocusTerminal(agent, &terminalv1.FocusTerminalRequest{TerminalId: human})
		must(t, err)
		check("FocusTerminal", r1)
		r2, err := s.UpdateTerminal(agent, &terminalv1.UpdateTerminalRequest{TerminalId: human, Icon: proto.String("x")})
		must(t, err)
		check("UpdateTerminal", r2)
		r3, err := s.ResizeTerminal(agent, &terminalv1.ResizeTerminalRequest{TerminalId: human, Cols: 100, Rows: 30})
		must(t, err)
		check("ResizeTerminal", r3)
		r4, err := s.MoveToGroup(agent, &terminalv1.MoveToGroupRequest{TerminalId: human})
		must(t, err)
		check("MoveToGroup", r4)
		// (The guard refuses MoveTerminal inside Phantom; its answer is
		// redacted all the same.) To its own window: nothing moves.
		rm, err := s.MoveTerminal(agent, &terminalv1.MoveTerminalRequest{TerminalId: human, WindowId: "w1"})
		must(t, err)
		check("MoveTerminal", rm)
		r5, err := s.SetAgentState(agent, &terminalv1.SetAgentStateRequest{TerminalId: human})
		must(t, err)
		check("SetAgentState", r5)
		r6, err := s.CreateTerminal(agent, &terminalv1.CreateTerminalRequest{Directory: in.env.Home, Command: []string{"sleep", "1000"}})
		must(t, err)
		check("CreateTerminal", r6)
		for _, ev := range watchUntil(t, s, agent, func() { in.c.FocusTerminal(ctx(t), &terminalv1.FocusTerminalRequest{TerminalId: human}) }, human) {
			check("WatchTerminals", ev)
		}
		if !idle {
			r7, err := s.SendKeys(agent, &terminalv1.SendKeysRequest{TerminalId: human, Keys: []string{"x"}})
			must(t, err)
			check("SendKeys", r7)
			return
		}
		// run_command waits a moment after a line was entered (its
		// program may still read the terminal): retried until it types.
		runSettled := func(r *terminalv1.RunCommandRequest) (resp *terminalv1.RunCommandResponse) {
			t.Helper()
			eventually(t, "run_command into the human's settled line", func() (bool, string) {
				var err error
				resp, err = s.RunCommand(agent, r)
				return err == nil, fmt.Sprint(err)
			})
			return resp
		}
		r8 := runSettled(&terminalv1.RunCommandRequest{TerminalId: human, Command: "true", WaitSeconds: 10})
		check("RunCommand", r8)
		if c := r8.GetResult().GetCommand(); c != "true" {
			t.Errorf("run_command's own result is %q, want the command it ran", c)
		}
		in.waitIdle(t, human)
		r9 := runSettled(&terminalv1.RunCommandRequest{TerminalId: human, Command: "export API_TOKEN=" + secret + "SECRET123"})
		check("RunCommand", r9)
		lastIs(human, "export API_TOKEN="+secret+"SECRET123")
	}
	callAll("idle, with a program title", true)

	// An OSC 7 directory, shown while the next command runs (the shell
	// reports its real one at each prompt).
	typeLine(human, `printf '\033]7;file://localhost/`+secret+`DIR\007'; sleep 1000`)
	eventually(t, "the OSC 7 directory in the human's view", func() (bool, string) {
		tm := in.get(t, human)
		return tm.GetDirectory() == "/"+secret+"DIR", tm.String()
	})
	callAll("busy, with an OSC 7 directory", false)

	// The human sees everything.
	h := in.get(t, human)
	if h.GetTitle() != secret+"TITLE" || h.GetDirectory() != "/"+secret+"DIR" || h.GetLastCommand().GetCommand() != "export API_TOKEN="+secret+"SECRET123" {
		t.Errorf("the human sees their tab as %v; want the program's title, the OSC 7 directory and the last command", h)
	}
	// An agent outside every tab sees no tab in full.
	list, err := s.ListTerminals(guard.NewContext(ctx(t), guard.Caller{ForAgent: true}), &terminalv1.ListTerminalsRequest{})
	must(t, err)
	check("ListTerminals", list)
	for _, tm := range decoded(t, list) {
		if tm.GetLastCommand() != nil {
			t.Errorf("an agent outside every tab sees tab %s's last command", tm.GetId())
		}
	}

	// Closing the human's tab (authz's part is not tested here) says
	// what closed in what the agent may see of it: no program text.
	closed, err := s.CloseTerminal(agent, &terminalv1.CloseTerminalRequest{TerminalId: human})
	must(t, err)
	check("CloseTerminal", closed)
	if closed.GetTerminal().GetId() != human || !strings.HasPrefix(closed.GetClosed(), "closed tab "+human) {
		t.Errorf("CloseTerminal = %v, want the human's tab and what closed", closed)
	}

	svc := terminalv1.File_phantom_terminal_v1_terminal_proto.Services().ByName("TerminalService")
	for i := range svc.Methods().Len() {
		m := svc.Methods().Get(i)
		if holdsTerminal(m.Output(), map[protoreflect.FullName]bool{}) && !checked[string(m.Name())] {
			t.Errorf("%s returns tabs but this test does not check it for an agent", m.Name())
		}
	}
}

// mustCreate opens a tab as the caller of c and returns its id.
func mustCreate(t *testing.T, s *Service, c context.Context) string {
	t.Helper()
	r, err := s.CreateTerminal(c, &terminalv1.CreateTerminalRequest{Directory: "/"})
	must(t, err)
	return r.GetTerminal().GetId()
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// decoded is the list as a gRPC client decodes it (the service sends
// the tabs pre-encoded, as unknown fields).
func decoded(t *testing.T, r *terminalv1.ListTerminalsResponse) []*terminalv1.Terminal {
	t.Helper()
	b, err := proto.Marshal(r)
	must(t, err)
	var out terminalv1.ListTerminalsResponse
	must(t, proto.Unmarshal(b, &out))
	return out.GetTerminals()
}

func byID(ts []*terminalv1.Terminal, id string) *terminalv1.Terminal {
	for _, tm := range ts {
		if tm.GetId() == id {
			return tm
		}
	}
	return nil
}

// wireText is m as JSON, as a client would decode it.
func wireText(m proto.Message) string {
	b, _ := proto.Marshal(m)
	fresh := m.ProtoReflect().New().Interface()
	if proto.Unmarshal(b, fresh) != nil {
		return string(b)
	}
	return protojson.Format(fresh)
}

// holdsTerminal reports whether messages of md can carry a Terminal.
func holdsTerminal(md protoreflect.MessageDescriptor, seen map[protoreflect.FullName]bool) bool {
	if md.FullName() == (&terminalv1.Terminal{}).ProtoReflect().Descriptor().FullName() {
		return true
	}
	if seen[md.FullName()] {
		return false
	}
	seen[md.FullName()] = true
	for i := range md.Fields().Len() {
		if f := md.Fields().Get(i); f.Message() != nil && holdsTerminal(f.Message(), seen) {
			return true
		}
	}
	return false
}

// watchUntil watches tabs as the caller of c, calling poke until an event
// about tab arrives, and returns the events seen.
func watchUntil(t *testing.T, s *Service, c context.Context, poke func(), tab string) []*terminalv1.WatchTerminalsResponse {
	t.Helper()
	wctx, cancel := context.WithCancel(c)
	rec := &watchRecorder{ctx: wctx}
	done := make(chan error, 1)
	go func() { done <- s.WatchTerminals(&terminalv1.WatchTerminalsRequest{}, rec) }()
	defer func() {
		cancel()
		<-done
	}()
	eventually(t, "a watch event about tab "+tab, func() (bool, string) {
		poke()
		for _, ev := range rec.events() {
			if ev.GetTerminal().GetId() == tab {
				return true, ""
			}
		}
		return false, ""
	})
	return rec.events()
}

// watchRecorder is the server side of a WatchTerminals stream that
// records what is sent.
type watchRecorder struct {
	grpc.ServerStream
	ctx context.Context
	mu  sync.Mutex
	got []*terminalv1.WatchTerminalsResponse
}

func (w *watchRecorder) Context() context.Context { return w.ctx }

func (w *watchRecorder) Send(r *terminalv1.WatchTerminalsResponse) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.got = append(w.got, r)
	return nil
}

func (w *watchRecorder) events() []*terminalv1.WatchTerminalsResponse {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]*terminalv1.WatchTerminalsResponse(nil), w.got...)
}
