package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/phantom-dev/phantom/editord/editor"
	"github.com/phantom-dev/phantom/editord/nvim"
	"github.com/phantom-dev/phantom/internal/paths"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

func editCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "edit [FILE[:LINE]]",
		Short: "Open the window's editor here, or a file in it",
		Long: `Makes Neovim, run in this tab, the editor of this tab's window: the one
the editor tools (list_panes, open_file, reveal_line, ...) drive. When the
window already has an editor, opens FILE in it and shows its tab instead.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			var arg string
			if len(args) == 1 {
				arg = args[0]
			}
			return edit(arg)
		},
	}
}

func edit(arg string) error {
	path, line := splitFileLine(arg, func(p string) bool { _, err := os.Stat(p); return err == nil })
	tab := os.Getenv("PHANTOM_TAB_ID")
	if tab == "" {
		return errors.New("phantom edit makes Neovim the editor of a Phantom window: run it in a Phantom tab")
	}
	l, err := paths.Default()
	if err != nil {
		return err
	}
	var tabs []*terminalv1.Terminal
	err = withTerminald(func(ctx context.Context, tc terminalv1.TerminalServiceClient) error {
		resp, err := tc.ListTerminals(ctx, &terminalv1.ListTerminalsRequest{})
		tabs = resp.GetTerminals()
		return err
	})
	if err != nil {
		return err
	}
	window := ""
	for _, t := range tabs {
		if t.GetId() == tab {
			window = t.GetWindowId()
		}
	}
	if window == "" {
		return fmt.Errorf("this tab (%s, from PHANTOM_TAB_ID) is not one of Phantom's tabs", tab)
	}
	sock := l.EditorSocket(window)
	if done, err := openInRunning(sock, path, line, window, tabs); done || err != nil {
		return err
	}
	nvimPath, err := exec.LookPath("nvim")
	if err != nil {
		return errors.New("phantom edit needs Neovim (nvim), which is not installed (Debian: apt-get install neovim)")
	}
	var files []string
	if line > 0 {
		files = append(files, "+"+strconv.Itoa(line))
	}
	if path != "" {
		files = append(files, path)
	}
	// Exec, not a child: the tab's foreground program is then the editor
	// itself, which is how terminald labels the tab.
	argv := editor.Command(nvimPath, sock, files...)
	return syscall.Exec(nvimPath, argv, os.Environ())
}

// openInRunning opens path in the editor listening on sock, if one does,
// and shows its tab. done is false when no editor listens there (a socket
// left by one that was killed is removed).
func openInRunning(sock, path string, line int, window string, tabs []*terminalv1.Terminal) (done bool, err error) {
	if _, err := os.Lstat(sock); err != nil {
		return false, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	c, err := nvim.Dial(ctx, sock)
	if errors.Is(err, syscall.ECONNREFUSED) {
		return false, os.Remove(sock)
	}
	if err != nil {
		return false, err
	}
	defer c.Close()
	if path != "" {
		dir, err := os.Getwd()
		if err != nil {
			return true, err
		}
		if _, err := editor.New(c).Open(ctx, editor.OpenSpec{Path: path, Dir: dir, Line: line, Create: true}); err != nil {
			return true, err
		}
	}
	for _, t := range tabs {
		if t.GetEditor() && t.GetWindowId() == window {
			fmt.Printf("opened in the editor, tab %s\n", t.GetId())
			return true, withTerminald(func(ctx context.Context, tc terminalv1.TerminalServiceClient) error {
				_, err := tc.FocusTerminal(ctx, &terminalv1.FocusTerminalRequest{TerminalId: t.GetId()})
				return err
			})
		}
	}
	fmt.Println("opened in the editor")
	return true, nil
}

// splitFileLine reads FILE[:LINE]: a trailing ":N" is a line number unless
// the whole argument names an existing file.
func splitFileLine(arg string, exists func(string) bool) (path string, line int) {
	i := strings.LastIndexByte(arg, ':')
	if i <= 0 || exists(arg) {
		return arg, 0
	}
	n, err := strconv.Atoi(arg[i+1:])
	if err != nil || n < 1 || strings.ContainsAny(arg[i+1:], "+-") {
		return arg, 0
	}
	return arg[:i], n
}
