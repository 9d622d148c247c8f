package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/phantom-dev/phantom/internal/paths"
)

// helloTimeout bounds the wait for the gateway's answer to the hello.
const helloTimeout = 15 * time.Second

// mcpServerCmd is the bridge an agent starts as its MCP server: stdio on
// one side, the gateway's socket on the other.
func mcpServerCmd() *cobra.Command {
	var socket, client string
	cmd := &cobra.Command{
		Use:   "+mcp-server --client=NAME [--socket=PATH]",
		Short: "Bridge an agent's stdio MCP connection to Phantom (agents run this)",
		Long: `Speak MCP on stdin/stdout for an agent and forward it to Phantom's MCP
socket. The first line to the socket is a hello naming this process, the
client and the tab it runs in ($PHANTOM_TAB_STATE); after Phantom accepts
it, messages pass unchanged both ways. Errors go to stderr, never stdout.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if socket == "" {
				socket = os.Getenv("PHANTOM_MCP_SOCKET")
			}
			if socket == "" {
				// Outside any tab: the instance's own socket.
				l, err := paths.Default()
				if err != nil {
					return err
				}
				socket = l.MCPSocket
			}
			return bridge(socket, client, os.Getenv("PHANTOM_TAB_STATE"), os.Stdin, os.Stdout)
		},
	}
	cmd.Flags().StringVar(&socket, "socket", "", "the gateway's socket (default $PHANTOM_MCP_SOCKET, else this instance's)")
	cmd.Flags().StringVar(&client, "client", "", "the agent's name, shown on permission sheets (required)")
	cmd.MarkFlagRequired("client")
	return cmd
}

// bridge connects to the socket, sends the hello, waits for acceptance and
// then copies stdin to the socket and the socket to stdout until either
// side closes.
func bridge(socket, client, tabState string, stdin io.Reader, stdout io.Writer) error {
	c, err := net.Dial("unix", socket)
	if err != nil {
		return fmt.Errorf("cannot reach Phantom's MCP socket %s: %w (is Phantom running? start it with `phantom up`)", socket, err)
	}
	conn := c.(*net.UnixConn)
	defer conn.Close()
	hello, _ := json.Marshal(map[string]any{
		"hello": "phantom", "version": 1, "pid": os.Getpid(), "client": client, "tab_state": tabState,
	})
	conn.SetDeadline(time.Now().Add(helloTimeout))
	if _, err := conn.Write(append(hello, '\n')); err != nil {
		return fmt.Errorf("send the hello to %s: %w", socket, err)
	}
	br := bufio.NewReaderSize(conn, 64<<10)
	line, err := br.ReadSlice('\n')
	if err != nil {
		return fmt.Errorf("the gateway closed the connection without answering the hello (%v)", err)
	}
	var answer struct {
		Hello string `json:"hello"`
		Error *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(line, &answer); err != nil {
		return fmt.Errorf("the gateway answered the hello with something unexpected: %q", line)
	}
	if answer.Error != nil {
		return fmt.Errorf("the gateway refused the connection: %s (%s)", answer.Error.Message, answer.Error.Code)
	}
	if answer.Hello != "ok" {
		return fmt.Errorf("the gateway answered the hello with something unexpected: %q", line)
	}
	conn.SetDeadline(time.Time{})

	done := make(chan error, 2)
	go func() {
		_, err := io.Copy(conn, stdin)
		if err == nil {
			err = errStdinClosed
		}
		done <- err
	}()
	go func() {
		_, err := io.Copy(stdout, br)
		if err == nil {
			err = errSocketClosed
		}
		done <- err
	}()
	err = <-done
	if errors.Is(err, errStdinClosed) {
		return nil // the agent is done
	}
	return err
}

var (
	errStdinClosed  = errors.New("stdin closed")
	errSocketClosed = errors.New("the gateway closed the connection")
)
