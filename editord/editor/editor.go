package editor

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/phantom-dev/phantom/editord/nvim"
	"github.com/phantom-dev/phantom/internal/errdefs"
)

//go:embed ops.lua
var opsLua string

// ops.lua is installed in a Neovim once, as a global named by its
// content, and each operation then sends only a short call: a fresh
// Neovim (or one an older editord drove) answers "not_loaded" to the
// first call, gets the module and is asked again.
var (
	opsKey = func() string {
		sum := sha256.Sum256([]byte(opsLua))
		return "phantom_ops_" + hex.EncodeToString(sum[:6])
	}()
	callChunk = "local M = _G['" + opsKey + "']\n" +
		"if M == nil then return {err = 'not_loaded'} end\n" +
		"local op = ...\nreturn M[op](select(2, ...))"
	loadChunk = "_G['" + opsKey + "'] = (function()\n" + opsLua + "\nend)()"
)

// Editor is one running Neovim and the operations on it.
type Editor struct {
	c *nvim.Client
}

// New drives the Neovim behind c.
func New(c *nvim.Client) *Editor { return &Editor{c: c} }

// Done is closed when the Neovim is gone.
func (e *Editor) Done() <-chan struct{} { return e.c.Done() }

// Close hangs up (the Neovim keeps running).
func (e *Editor) Close() error { return e.c.Close() }

// reply is what every operation of ops.lua returns.
type reply struct {
	Err     string `msgpack:"err"`
	Pane    *Pane  `msgpack:"pane"`
	File    File   `msgpack:"file"`
	Line    int    `msgpack:"line"`
	Clamped bool   `msgpack:"clamped"`
	Kept    bool   `msgpack:"kept"`
	State
}

// callTimeout bounds one operation. Neovim answers between keys, in any
// mode, but not while something inside it blocks (a plugin's long job, a
// shell command the human ran with :!): then the call fails instead of
// hanging the agent.
const callTimeout = 5 * time.Second

func (e *Editor) run(ctx context.Context, op string, args ...any) (reply, error) {
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	var r reply
	err := e.c.ExecLua(cctx, callChunk, &r, append([]any{op}, args...)...)
	if err == nil && r.Err == "not_loaded" {
		if err = e.c.ExecLua(cctx, loadChunk, nil); err == nil {
			r = reply{}
			err = e.c.ExecLua(cctx, callChunk, &r, append([]any{op}, args...)...)
		}
	}
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return r, fmt.Errorf("the editor did not answer %s within %s: something in it is busy (a command the human started with :!, a plugin); try again once it is done: %w",
				op, callTimeout, errdefs.ErrFailedPrecondition)
		}
		return r, fmt.Errorf("editor %s: %w", op, err)
	}
	return r, nil
}

// State lists the panes of the current tab page, the open files and the
// mode.
func (e *Editor) State(ctx context.Context) (State, error) {
	r, err := e.run(ctx, "state")
	if r.Panes == nil {
		r.Panes = []Pane{}
	}
	return r.State, err
}

// Open shows a file as s asks; see OpenSpec.
func (e *Editor) Open(ctx context.Context, s OpenSpec) (Opened, error) {
	path, created, err := resolve(s.Path, s.Dir, s.Create)
	if err != nil {
		return Opened{}, err
	}
	r, err := e.run(ctx, "open", path, 0, s.Line, string(s.Split), false)
	if err != nil {
		return Opened{}, err
	}
	return opened(r, created), nil
}

// Reveal shows the file (by path, else by tab id) in the pane already
// showing it or the focused one, puts the cursor on line, centres it and
// moves the reveal mark there.
func (e *Editor) Reveal(ctx context.Context, s RevealSpec) (Opened, error) {
	var path string
	var buf int
	switch {
	case s.Path != "" && s.TabID != "":
		return Opened{}, fmt.Errorf("give path or tab_id, not both (path %q, tab_id %q): %w", s.Path, s.TabID, errdefs.ErrInvalidArgument)
	case s.Path != "":
		var err error
		if path, _, err = resolve(s.Path, s.Dir, false); err != nil {
			return Opened{}, err
		}
	case s.TabID != "":
		var err error
		if buf, err = parseTab(s.TabID); err != nil {
			return Opened{}, err
		}
	default:
		return Opened{}, fmt.Errorf("give path or tab_id: %w", errdefs.ErrInvalidArgument)
	}
	if s.Line < 1 {
		return Opened{}, fmt.Errorf("line %d: lines count from 1: %w", s.Line, errdefs.ErrInvalidArgument)
	}
	r, err := e.run(ctx, "reveal", path, buf, s.Line, s.Message)
	if err != nil {
		return Opened{}, err
	}
	if err := tabErr(r, s.TabID); err != nil {
		return Opened{}, err
	}
	return opened(r, false), nil
}

// FocusTab shows the tab id in the pane already showing it, or the focused
// one, and focuses that pane.
func (e *Editor) FocusTab(ctx context.Context, id string) (Pane, error) {
	buf, err := parseTab(id)
	if err != nil {
		return Pane{}, err
	}
	r, err := e.run(ctx, "focus", buf)
	if err != nil {
		return Pane{}, err
	}
	if err := tabErr(r, id); err != nil {
		return Pane{}, err
	}
	return *r.Pane, nil
}

// CloseTab closes the tab id. A modified file is refused unless force, and
// then kept, hidden, with its changes: kept says so.
func (e *Editor) CloseTab(ctx context.Context, id string, force bool) (f File, kept bool, err error) {
	buf, err := parseTab(id)
	if err != nil {
		return File{}, false, err
	}
	r, err := e.run(ctx, "close", buf, force)
	if err != nil {
		return File{}, false, err
	}
	if r.Err == "modified" {
		return r.File, false, fmt.Errorf("tab %s (%s) has unsaved changes; the human should save or undo them, or pass force to close it and keep the changes hidden: %w",
			id, r.File.Path, errdefs.ErrFailedPrecondition)
	}
	if err := tabErr(r, id); err != nil {
		return File{}, false, err
	}
	return r.File, r.Kept, nil
}

func opened(r reply, created bool) Opened {
	o := Opened{Pane: *r.Pane, Line: r.Line, Created: created}
	if r.Clamped {
		o.Notes = append(o.Notes, fmt.Sprintf("line clamped to %d, the last line of %s", r.Line, r.Pane.File.Path))
	}
	if created {
		o.Notes = append(o.Notes, fmt.Sprintf("%s does not exist: opened an empty buffer, not written until the human saves it", r.Pane.File.Path))
	}
	return o
}

func tabErr(r reply, id string) error {
	switch r.Err {
	case "":
		return nil
	case "no_tab":
		return fmt.Errorf("tab %s: no such open file in the editor (list_panes lists them): %w", id, errdefs.ErrNotFound)
	}
	return fmt.Errorf("tab %s: %s", id, r.Err)
}

// parseTab reads a tab id: Neovim's buffer number, which Neovim never
// reuses while it runs.
func parseTab(id string) (int, error) {
	n, err := strconv.Atoi(id)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("tab_id %q: not a tab id (list_panes lists them): %w", id, errdefs.ErrInvalidArgument)
	}
	return n, nil
}

// resolve makes path absolute against dir and checks it names a file. A
// missing file is an error unless create, and then created says so.
func resolve(path, dir string, create bool) (abs string, created bool, err error) {
	if !filepath.IsAbs(path) {
		if dir == "" {
			return "", false, fmt.Errorf("path %q is relative and the caller has no directory: give an absolute path: %w", path, errdefs.ErrInvalidArgument)
		}
		path = filepath.Join(dir, path)
	}
	path = filepath.Clean(path)
	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.IsDir():
		return "", false, fmt.Errorf("path %s is a directory, not a file: %w", path, errdefs.ErrInvalidArgument)
	case err == nil:
		return path, false, nil
	case os.IsNotExist(err) && create:
		if _, err := os.Stat(filepath.Dir(path)); err != nil {
			return "", false, fmt.Errorf("path %s: its directory does not exist: %w", path, errdefs.ErrNotFound)
		}
		return path, true, nil
	case os.IsNotExist(err):
		return "", false, fmt.Errorf("path %s does not exist (pass create to open an empty buffer for it): %w", path, errdefs.ErrNotFound)
	}
	return "", false, fmt.Errorf("path %s: %w", strings.TrimSpace(err.Error()), errdefs.ErrInvalidArgument)
}
