package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/phantom-dev/phantom/authz/audit"
	"github.com/phantom-dev/phantom/internal/daemon"
	authzv1 "github.com/phantom-dev/phantom/proto/phantom/authz/v1"
)

// TestAuditAttachAnswerAndAlarm: an answer given in `phantom attach` is
// audited with the attach client's process and terminal (terminald only
// relays it), and a refused grants file is an alarm on attach's status
// line until it is fixed.
func TestAuditAttachAnswerAndAlarm(t *testing.T) {
	in := startPhantom(t)
	t1 := in.list(t)[0].GetId()
	c := in.attach(t, 120, 30, nil)
	c.waitStatus("shown", func(s string) bool { return strings.Contains(s, "1:") })

	cc, err := daemon.Dial(in.env.Layout.DaemonAddr("authz"))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	done := make(chan *authzv1.AuthorizeResponse, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	go func() {
		resp, err := authzv1.NewAuthzServiceClient(cc).Authorize(ctx, &authzv1.AuthorizeRequest{
			Caller: &authzv1.Caller{Client: "audited", ConnectionId: "c1", Program: "/outside/audited"}, Tool: "read_output",
			ArgumentsJson: fmt.Sprintf(`{"terminal_id":%q}`, t1)}, grpc.WaitForReady(true))
		if err != nil {
			resp = &authzv1.AuthorizeResponse{Reason: err.Error()}
		}
		done <- resp
	}()
	c.waitStatus("the sheet marker", func(s string) bool { return strings.Contains(s, "1 sheet") })
	c.send(prefix + "s")
	c.waitText("d deny  o once")
	c.send("o")
	select {
	case r := <-done:
		if !r.GetAllowed() {
			t.Fatalf("Authorize after allowing once in attach: %v", r)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("Authorize did not return; the client shows:\n%s", c.text())
	}

	var ans audit.Entry
	eventually(t, "the attach answer in the audit log", func() (bool, string) {
		out, err := in.run("audit", "--json")
		if err != nil {
			return false, string(out)
		}
		for _, e := range auditJSON(t, func(...string) string { return string(out) }) {
			if e.Event == audit.SheetAnswered && e.Client == "audited" {
				ans = e
				return true, ""
			}
		}
		return false, string(out)
	})
	if ans.Decision != "once" || ans.By == nil || ans.By.For == nil || ans.By.For.PID != c.cmd.Process.Pid ||
		!strings.HasPrefix(ans.By.For.Terminal, "/dev/pts/") || !strings.Contains(ans.By.For.Command, "attach") {
		t.Errorf("the attach answer's entry does not name the attach client (pid %d) and its terminal: %+v by %+v",
			c.cmd.Process.Pid, ans, ans.By)
	}

	// A world-writable grants file: the alarm shows, prefix s says why.
	path := filepath.Join(in.env.Layout.State, "grants.json")
	if err := os.WriteFile(path, []byte(`{"version":1,"grants":[]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	must(t, os.Chmod(path, 0o666))
	c.waitStatus("the grants alarm", func(s string) bool { return strings.Contains(s, "grants.json refused") })
	c.send(prefix + "s")
	c.waitStatus("why", func(s string) bool { return strings.Contains(s, "refused: grants.json is writable by its group") })
	must(t, os.Chmod(path, 0o600))
	c.waitStatus("the alarm gone", func(s string) bool { return !strings.Contains(s, "grants.json refused") })
	c.send(prefix + "d")
	if code, _ := c.wait(); code != 0 {
		t.Fatalf("detach: exit %d", code)
	}
}
