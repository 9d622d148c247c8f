// Package deploy holds the compose stack's end-to-end test: the real image,
// real containers, daemons over TCP with mutual TLS, an agent on the
// official MCP Go SDK client in a tab inside the stack, and the human's CLI
// answering from outside. It needs Docker and docker-compose, and runs only
// with PHANTOM_COMPOSE_TEST=1 (`make compose-test` sets it up, dockerd
// included).
package deploy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/phantom-dev/phantom/internal/daemon"
	"github.com/phantom-dev/phantom/internal/paths"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// composeEnv gates the test: it builds images and starts containers.
const composeEnv = "PHANTOM_COMPOSE_TEST"

// ports are the daemons' TCP ports in compose.yaml.
var ports = map[string]string{"terminald": "7001", "authz": "7002", "gateway": "7003", "gitd": "7004", "lspd": "7005", "editord": "7006"}

// stack is one compose project of the test.
type stack struct {
	t       *testing.T
	project string
	env     []string
	certs   string
	bins    string // host-built binaries: phantom, testagent, mcpbench
	home    string // the human CLI's isolated HOME and XDG root
}

// newStack builds the binaries and certificates a test needs and names a
// project of its own, so that runs never share containers.
func newStack(t *testing.T) *stack {
	t.Helper()
	if os.Getenv(composeEnv) != "1" {
		t.Skipf("set %s=1 to run the compose stack (make compose-test)", composeEnv)
	}
	image := os.Getenv("PHANTOM_IMAGE")
	if image == "" {
		out, err := exec.Command("./build-image").Output()
		if err != nil {
			t.Fatalf("deploy/build-image: %v", err)
		}
		image = strings.TrimSpace(string(out))
	}
	root := t.TempDir()
	s := &stack{
		t:       t,
		project: "phantomtest" + strconv.Itoa(os.Getpid()),
		certs:   filepath.Join(root, "certs"),
		bins:    filepath.Join(root, "bin"),
		home:    filepath.Join(root, "home"),
	}
	for name, pkg := range map[string]string{"phantom": "../cmd/phantom", "testagent": "../gateway/internal/testagent", "mcpbench": "./internal/mcpbench"} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(s.bins, name), pkg)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build %s: %v\n%s", pkg, err, out)
		}
	}
	if out, err := exec.Command(filepath.Join(s.bins, "phantom"), "certs", "--dir", s.certs).CombinedOutput(); err != nil {
		t.Fatalf("phantom certs: %v\n%s", err, out)
	}
	s.env = append(os.Environ(), "PHANTOM_IMAGE="+image, "PHANTOM_CERTS="+s.certs, "COMPOSE_PROJECT_NAME="+s.project)
	return s
}

// composeCommand is docker-compose (v1, what Debian ships), else the
// docker CLI's compose plugin.
func composeCommand() []string {
	if _, err := exec.LookPath("docker-compose"); err == nil {
		return []string{"docker-compose"}
	}
	return []string{"docker", "compose"}
}

// compose runs docker-compose on this stack.
func (s *stack) compose(args ...string) (string, error) {
	argv := append(composeCommand(), append([]string{"-f", "compose.yaml", "-p", s.project}, args...)...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = s.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// must is compose that fails the test.
func (s *stack) must(args ...string) string {
	s.t.Helper()
	out, err := s.compose(args...)
	if err != nil {
		s.t.Fatalf("docker-compose %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// container is the id of a service's container.
func (s *stack) container(svc string) string {
	s.t.Helper()
	id := s.containers()[svc]
	if id == "" {
		s.t.Fatalf("service %s has no container", svc)
	}
	return id
}

// containers maps each service to its container's id: one docker call,
// by the project's label (docker-compose itself takes most of a second to
// start, which would show in the start times measured).
func (s *stack) containers() map[string]string {
	out, _ := docker("", "ps", "-a", "--filter", "label=com.docker.compose.project="+s.project,
		"--format", `{{.Label "com.docker.compose.service"}} {{.ID}}`)
	ids := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if svc, id, ok := strings.Cut(l, " "); ok {
			ids[svc] = id
		}
	}
	return ids
}

// docker runs docker with stdin.
func docker(stdin string, args ...string) (string, error) {
	cmd := exec.Command("docker", args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// exec runs argv in svc's container.
func (s *stack) exec(svc, stdin string, argv ...string) (string, error) {
	return docker(stdin, append([]string{"exec", "-i", s.container(svc)}, argv...)...)
}

// mustExec is exec that fails the test.
func (s *stack) mustExec(svc, stdin string, argv ...string) string {
	s.t.Helper()
	out, err := s.exec(svc, stdin, argv...)
	if err != nil {
		s.t.Fatalf("in %s: %s: %v\n%s", svc, strings.Join(argv, " "), err, out)
	}
	return out
}

// waitHealthy waits until every named service (all when none) reports
// healthy, and returns how long that took.
func (s *stack) waitHealthy(services ...string) time.Duration {
	s.t.Helper()
	if len(services) == 0 {
		services = paths.Daemons
	}
	start := time.Now()
	deadline := start.Add(3 * time.Minute)
	ids := s.containers()
	for {
		args := []string{"inspect", "-f", "{{.State.Health.Status}}"}
		for _, svc := range services {
			args = append(args, ids[svc])
		}
		out, _ := docker("", args...)
		st := strings.Fields(out)
		var bad []string
		for i, svc := range services {
			if i >= len(st) || st[i] != "healthy" {
				bad = append(bad, svc)
			}
		}
		if len(bad) == 0 {
			return time.Since(start)
		}
		if time.Now().After(deadline) {
			logs, _ := s.compose("logs", "--tail=30")
			s.t.Fatalf("not healthy after 3 min: %v (docker inspect: %q)\n%s", bad, out, logs)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// hostPort is where the host reaches svc's published port.
func (s *stack) hostPort(svc string) string {
	s.t.Helper()
	out := strings.TrimSpace(s.must("port", svc, ports[svc]))
	if out == "" {
		s.t.Fatalf("service %s publishes no port %s", svc, ports[svc])
	}
	return out
}

// down removes the stack and checks nothing of it is left.
func (s *stack) down() {
	s.t.Helper()
	if out, err := s.compose("down", "-v", "--remove-orphans", "-t", "5"); err != nil {
		s.t.Errorf("docker-compose down: %v\n%s", err, out)
	}
	label := "label=com.docker.compose.project=" + s.project
	for _, kind := range [][]string{{"ps", "-a"}, {"network", "ls"}, {"volume", "ls"}} {
		out, err := docker("", append(kind, "-q", "--filter", label)...)
		if err != nil || strings.TrimSpace(out) != "" {
			s.t.Errorf("after down, docker %s still lists %q (%v)", strings.Join(kind, " "), strings.TrimSpace(out), err)
		}
	}
}

// human runs the host's phantom CLI as the human, with the human's
// certificate, against the stack's published authz.
func (s *stack) human(args ...string) (string, error) {
	cmd := exec.Command(filepath.Join(s.bins, "phantom"), args...)
	cmd.Env = append(os.Environ(),
		"HOME="+s.home, "XDG_RUNTIME_DIR="+s.home+"/run", "XDG_CACHE_HOME="+s.home+"/cache",
		"XDG_STATE_HOME="+s.home+"/state", "XDG_CONFIG_HOME="+s.home+"/config",
		"PHANTOM_AUTHZ_ADDR=tcp://"+s.hostPort("authz"),
		daemon.TLSDirEnv+"="+s.certs, daemon.TLSNameEnv+"="+daemon.HumanIdentity)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil {
		return out.String(), fmt.Errorf("phantom %s: %v: %s", strings.Join(args, " "), err, errb.String())
	}
	return out.String(), nil
}

// answerSheet waits for a sheet for tool and answers it once, as the human.
func (s *stack) answerSheet(tool string) {
	s.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		out, err := s.human("sheet", "list", "--json")
		var l struct {
			Sheets []struct {
				ID   string `json:"id"`
				Tool string `json:"tool"`
			} `json:"sheets"`
		}
		if err == nil {
			json.Unmarshal([]byte(out), &l)
			for _, sh := range l.Sheets {
				if sh.Tool == tool {
					if _, err := s.human("sheet", "answer", sh.ID, "--once"); err != nil {
						s.t.Fatal(err)
					}
					return
				}
			}
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("no sheet for %s within 60 s (last: %v %s)", tool, err, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// outcome is one line a test agent wrote.
type outcome struct {
	Step   int             `json:"step"`
	Op     string          `json:"op"`
	Result json.RawMessage `json:"result"`
	Error  string          `json:"error"`
	Done   bool            `json:"done"`
}

// callResult is the part of a tools/call result the test reads.
type callResult struct {
	IsError bool `json:"isError"`
	Content []struct {
		Text string `json:"text"`
	} `json:"content"`
	Structured json.RawMessage `json:"structuredContent"`
}

// failure is what a call step reported as failing; "" when it succeeded.
func (o outcome) failure() string {
	if o.Error != "" {
		return o.Error
	}
	var r callResult
	json.Unmarshal(o.Result, &r)
	if !r.IsError {
		return ""
	}
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	return "isError: " + b.String()
}

// readOutcomes reads an agent's outcome file in svc.
func (s *stack) readOutcomes(svc, path string) []outcome {
	out, _ := s.exec(svc, "", "cat", path)
	var lines []outcome
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var o outcome
		if json.Unmarshal([]byte(l), &o) == nil {
			lines = append(lines, o)
		}
	}
	return lines
}

// waitStep waits for step i of the agent whose outcomes are at path in svc.
func (s *stack) waitStep(svc, path string, i int, d time.Duration) outcome {
	s.t.Helper()
	deadline := time.Now().Add(d)
	for {
		lines := s.readOutcomes(svc, path)
		for _, o := range lines {
			if o.Step == i {
				return o
			}
			if o.Op == "fatal" {
				s.t.Fatalf("agent failed before step %d: %s", i, o.Error)
			}
		}
		if time.Now().After(deadline) {
			logs, _ := s.compose("logs", "--tail=40")
			s.t.Fatalf("agent did not report step %d within %v; so far: %+v\n%s", i, d, lines, logs)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// tlsTo dials a published daemon port from the host with cfg.
func tlsTo(t *testing.T, addr string, creds credentials.TransportCredentials) *grpc.ClientConn {
	t.Helper()
	cc, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
}

// testCertificates checks, against the running stack, that a daemon
// reached without a valid certificate refuses, and that a valid one gets
// only what its holder may call.
func (s *stack) testCertificates(t *testing.T) {
	human, err := daemon.TLSFiles{Dir: s.certs, Name: daemon.HumanIdentity}.ClientTLSConfig()
	if err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	if err := daemon.WriteCerts(daemon.CertRequest{Dir: other, Daemons: []string{"gateway"}}); err != nil {
		t.Fatal(err)
	}
	foreign, err := daemon.TLSFiles{Dir: other, Name: "gateway"}.ClientTLSConfig()
	if err != nil {
		t.Fatal(err)
	}
	foreign.RootCAs = human.RootCAs // trusts the stack, presents another CA's gateway
	noCert := human.Clone()
	noCert.Certificates = nil
	terminald := s.hostPort("terminald")
	tests := []struct {
		name  string
		creds credentials.TransportCredentials
		call  func(context.Context, *grpc.ClientConn) error
		want  codes.Code
	}{
		{"plain TCP", insecure.NewCredentials(), checkHealth, codes.Unavailable},
		{"TLS without a client certificate", credentials.NewTLS(noCert), checkHealth, codes.Unavailable},
		{"a certificate of another CA", credentials.NewTLS(foreign), checkHealth, codes.Unavailable},
		{"the human's certificate, health", credentials.NewTLS(human), checkHealth, codes.OK},
		{"the human's certificate, list terminals", credentials.NewTLS(human), listTerminals, codes.PermissionDenied},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			err := tt.call(ctx, tlsTo(t, terminald, tt.creds))
			if got := status.Code(err); got != tt.want {
				t.Errorf("terminald at %s: %v, want %v", terminald, err, tt.want)
			}
		})
	}
	// grpcurl, as the README shows it.
	grpcurl, err := exec.LookPath("grpcurl")
	if err != nil {
		grpcurl = "../.tools/bin/grpcurl"
	}
	if _, err := os.Stat(grpcurl); err == nil {
		_, port, _ := strings.Cut(s.hostPort("authz"), ":")
		out, err := exec.Command(grpcurl, "-cacert", s.certs+"/ca.crt", "-cert", s.certs+"/human/tls.crt", "-key", s.certs+"/human/tls.key",
			"localhost:"+port, "list").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "phantom.authz.v1.AuthzService") {
			t.Errorf("grpcurl list with the human's certificate: %v\n%s", err, out)
		}
		out, err = exec.Command(grpcurl, "-insecure", "localhost:"+port, "list").CombinedOutput()
		if err == nil {
			t.Errorf("grpcurl without a certificate got through:\n%s", out)
		}
	}
}

func checkHealth(ctx context.Context, cc *grpc.ClientConn) error {
	_, err := healthpb.NewHealthClient(cc).Check(ctx, &healthpb.HealthCheckRequest{})
	return err
}

func listTerminals(ctx context.Context, cc *grpc.ClientConn) error {
	_, err := terminalv1.NewTerminalServiceClient(cc).ListTerminals(ctx, &terminalv1.ListTerminalsRequest{})
	return err
}

// install copies a host-built binary into services' containers.
func (s *stack) install(name string, services ...string) {
	s.t.Helper()
	for _, svc := range services {
		if out, err := docker("", "cp", filepath.Join(s.bins, name), s.container(svc)+":/usr/local/bin/"+name); err != nil {
			s.t.Fatalf("docker cp %s into %s: %v\n%s", name, svc, err, out)
		}
	}
}

// outside runs a test agent script in the gateway's container: a process
// in the stack's pid namespace but outside every tab (as the human's own
// MCP client would be), and returns its outcomes.
func (s *stack) outside(script []map[string]any) []outcome {
	s.t.Helper()
	b, _ := json.Marshal(script)
	s.mustExec("gateway", string(b), "sh", "-c", "cat > /tmp/outside.json && rm -f /tmp/outside.jsonl")
	if out, err := s.exec("gateway", "", "testagent", "phantom", "/tmp/outside.json", "/tmp/outside.jsonl"); err != nil {
		s.t.Fatalf("outside agent: %v\n%s", err, out)
	}
	return s.readOutcomes("gateway", "/tmp/outside.jsonl")
}

// TestCompose brings the stack up, runs an agent in a tab inside it
// through the MCP socket, exercises one tool of each daemon (with a sheet
// answered by the human's CLI from outside), kills lspd's container and
// sees only lspd's tool fail and recover, checks certificates, and takes
// the stack down leaving nothing.
func TestCompose(t *testing.T) {
	s := newStack(t)
	t.Cleanup(s.down)
	start := time.Now()
	s.must("up", "-d")
	s.waitHealthy()
	cold := time.Since(start)
	t.Logf("cold start (up -d to all healthy): %v", cold.Round(time.Millisecond))

	t.Run("certificates", s.testCertificates)

	s.install("testagent", "terminald", "gateway")
	s.install("mcpbench", "gateway")
	s.mustExec("terminald", "", "sh", "-c", `set -e
mkdir -p /workspace/agent /workspace/repo
cd /workspace/repo && git init -q && git -c user.email=t@example.com -c user.name=t commit -q --allow-empty -m init`)
	const out = "/workspace/agent/out.jsonl"
	script := []map[string]any{
		{"op": "call", "tool": "list_terminals"},                           // 0 terminald
		{"op": "call", "tool": "list_worktrees", "args": map[string]any{}}, // 1 gitd, after a sheet
		{"op": "call", "tool": "list_language_servers"},                    // 2 lspd
		{"op": "call", "tool": "list_panes"},                               // 3 editord
		{"op": "wait", "file": "/workspace/agent/killed"},                  // 4
		{"op": "call", "tool": "list_language_servers"},                    // 5 lspd is down
		{"op": "call", "tool": "list_terminals"},                           // 6
		{"op": "call", "tool": "list_worktrees", "args": map[string]any{}}, // 7
		{"op": "call", "tool": "list_panes"},                               // 8
		{"op": "wait", "file": "/workspace/agent/restarted"},               // 9
		{"op": "call", "tool": "list_language_servers", "retry": true},     // 10 lspd is back
		{"op": "exit"},
	}
	b, _ := json.Marshal(script)
	s.mustExec("terminald", string(b), "sh", "-c", "cat > /workspace/agent/script.json")

	// The tab is opened and the agent started through the gateway's own
	// tools, by an MCP client outside every tab: typing a command is "run",
	// so the human answers a sheet for it.
	created := s.outside([]map[string]any{
		{"op": "call", "tool": "create_terminal", "args": map[string]any{"directory": "/workspace/repo", "name": "agent"}},
		{"op": "exit"},
	})
	var tab struct {
		ID string `json:"id"`
	}
	for _, o := range created {
		if o.Step == 0 {
			if f := o.failure(); f != "" {
				t.Fatalf("create_terminal: %s", f)
			}
			var r callResult
			json.Unmarshal(o.Result, &r)
			var sc map[string]json.RawMessage
			json.Unmarshal(r.Structured, &sc)
			if err := json.Unmarshal(r.Structured, &tab); err != nil || tab.ID == "" {
				json.Unmarshal(sc["terminal"], &tab)
			}
		}
	}
	if tab.ID == "" {
		t.Fatalf("create_terminal gave no tab id: %+v", created)
	}
	ran := make(chan []outcome, 1)
	go func() {
		ran <- s.outside([]map[string]any{
			{"op": "call", "tool": "run_command", "retry": true, "args": map[string]any{"terminal_id": tab.ID, "command": "testagent phantom /workspace/agent/script.json " + out}},
			{"op": "exit"},
		})
	}()
	s.answerSheet("run_command")
	for _, o := range <-ran {
		if o.Step == 0 && o.failure() != "" {
			t.Fatalf("run_command: %s", o.failure())
		}
	}

	// One tool of each daemon, from the agent in the tab.
	if o := s.waitStep("terminald", out, 0, time.Minute); o.failure() != "" {
		t.Fatalf("list_terminals: %s", o.failure())
	}
	s.answerSheet("list_worktrees")
	want := map[int]string{1: "list_worktrees", 2: "list_language_servers"}
	for i := 1; i <= 2; i++ {
		if o := s.waitStep("terminald", out, i, time.Minute); o.failure() != "" {
			t.Fatalf("%s: %s", want[i], o.failure())
		}
	}
	panes := s.waitStep("terminald", out, 3, time.Minute).failure()
	if strings.Contains(panes, "not running") || strings.Contains(panes, "unavailable") {
		t.Fatalf("list_panes did not reach editord: %s", panes)
	}
	t.Logf("list_panes (editord) answered: %q (an error here is editord's own answer: no editor yet)", panes)

	// Kill lspd: only its tool fails, plainly, and comes back with it.
	s.must("kill", "lspd")
	s.mustExec("terminald", "", "touch", "/workspace/agent/killed")
	down := s.waitStep("terminald", out, 5, time.Minute).failure()
	if down == "" || !strings.Contains(down, "lspd") {
		t.Errorf("list_language_servers with lspd killed: %q, want an error naming lspd", down)
	}
	t.Logf("with lspd killed, list_language_servers says: %s", down)
	if o := s.waitStep("terminald", out, 6, time.Minute); o.failure() != "" {
		t.Errorf("list_terminals with lspd killed: %s", o.failure())
	}
	s.answerSheet("list_worktrees") // "once" covered one call
	if o := s.waitStep("terminald", out, 7, time.Minute); o.failure() != "" {
		t.Errorf("list_worktrees with lspd killed: %s", o.failure())
	}
	if got := s.waitStep("terminald", out, 8, time.Minute).failure(); got != panes {
		t.Errorf("list_panes with lspd killed: %q, before: %q", got, panes)
	}
	s.must("start", "lspd")
	s.waitHealthy("lspd")
	s.mustExec("terminald", "", "touch", "/workspace/agent/restarted")
	if o := s.waitStep("terminald", out, 10, time.Minute); o.failure() != "" {
		t.Errorf("list_language_servers after lspd restarted: %s", o.failure())
	}

	if os.Getenv("PHANTOM_BENCH") == "1" {
		s.bench(t, cold)
	}
}
