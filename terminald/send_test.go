package terminald

import (
	"os/exec"
	"testing"

	"google.golang.org/grpc/codes"

	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// TestSendKeysAndClose: the human's SendKeys types key names and text
// into a busy tab (C-c stops what runs) and says what it typed; a key
// name that names no key is refused, naming it, and types nothing;
// CloseTerminal says what it closed, and the tab is gone.
func TestSendKeysAndClose(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("sh not installed")
	}
	in := start(t, sh)
	tab := in.create(t, &terminalv1.CreateTerminalRequest{}).GetId()
	if _, err := in.c.SendKeys(ctx(t), &terminalv1.SendKeysRequest{TerminalId: tab, Keys: []string{"sleep 1000", "Enter"}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "sleep in the foreground", func() (bool, string) {
		tm := in.get(t, tab)
		return tm.GetForegroundProcess().GetName() == "sleep", tm.String()
	})
	_, err = in.c.SendKeys(ctx(t), &terminalv1.SendKeysRequest{TerminalId: tab, Keys: []string{"C-Foo"}})
	wantCode(t, err, codes.InvalidArgument, `"C-Foo", is not a key name`)
	r, err := in.c.SendKeys(ctx(t), &terminalv1.SendKeysRequest{TerminalId: tab, Keys: []string{"C-c"}})
	if err != nil || r.GetTyped() != "␃" {
		t.Fatalf("SendKeys C-c = %v, %v; want typed ␃", r, err)
	}
	eventually(t, "sleep to end", func() (bool, string) {
		tm := in.get(t, tab)
		return tm.GetIdle() && tm.GetForegroundProcess().GetName() != "sleep", tm.String()
	})
	closed, err := in.c.CloseTerminal(ctx(t), &terminalv1.CloseTerminalRequest{TerminalId: tab})
	if err != nil || closed.GetTerminal().GetId() != tab || closed.GetClosed() == "" {
		t.Fatalf("CloseTerminal = %v, %v", closed, err)
	}
	_, err = in.c.SendKeys(ctx(t), &terminalv1.SendKeysRequest{TerminalId: tab, Keys: []string{"x"}})
	wantCode(t, err, codes.NotFound, tab)
}
