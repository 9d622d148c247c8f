package policy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/phantom-dev/phantom/internal/errdefs"
)

// Policy evaluates tool calls against the table.
type Policy struct {
	tabs    Lister
	project Projector
}

// New returns a policy that learns about tabs from tabs and names projects
// with project (GitProject when nil).
func New(tabs Lister, project Projector) *Policy {
	if project == nil {
		project = GitProject
	}
	return &Policy{tabs: tabs, project: project}
}

// Evaluate works out what a call of tool with argsJSON by caller needs. An
// unknown tool, malformed arguments or a tab that does not exist is an
// error of an errdefs kind whose message a model can act on.
func (p *Policy) Evaluate(ctx context.Context, c Caller, tool, argsJSON string) (Need, error) {
	r, ok := tools[tool]
	if !ok {
		return Need{}, fmt.Errorf("tool %q is not in Phantom's permission table, so it is refused: %w", tool, errdefs.ErrInvalidArgument)
	}
	need := Need{Tool: tool, Capability: r.capability}
	if r.touches == nil {
		return need, nil
	}
	args, err := parseArgs(argsJSON)
	if err != nil {
		return Need{}, err
	}
	list, err := p.tabs.Tabs(ctx)
	if err != nil {
		return Need{}, fmt.Errorf("cannot learn the tabs from terminald, so the call is refused: %v: %w", err, errdefs.ErrUnavailable)
	}
	e := &evaluation{ctx: ctx, args: args, tabs: list, project: p.project, projects: map[string]string{},
		escaped: c.InsideWithoutTab}
	// A caller that left its tab's process tree is in no tab, whatever
	// tab it names: everything it touches reaches all.
	if c.TabID != "" && !c.InsideWithoutTab {
		self, ok := e.tab(c.TabID)
		if !ok {
			return Need{}, fmt.Errorf("the caller's tab %s no longer exists: %w", c.TabID, errdefs.ErrFailedPrecondition)
		}
		e.self = &self
		need.CallerTitle = tabTitle(self)
		need.Project = e.projectOf(self.Directory)
	}
	need.Reach, need.Subject, err = r.touches(e)
	if err != nil {
		return Need{}, err
	}
	return need, nil
}

// evaluation is one call being evaluated.
type evaluation struct {
	ctx      context.Context
	args     arguments
	tabs     []TabInfo
	self     *TabInfo // nil outside any tab
	escaped  bool     // the caller runs inside Phantom but in no tab
	project  Projector
	projects map[string]string // directory → project, per call
}

func (e *evaluation) tab(id string) (TabInfo, bool) {
	for _, t := range e.tabs {
		if t.ID == id {
			return t, true
		}
	}
	return TabInfo{}, false
}

func (e *evaluation) projectOf(dir string) string {
	if dir == "" {
		return ""
	}
	p, ok := e.projects[dir]
	if !ok {
		p = e.project(e.ctx, dir)
		e.projects[dir] = p
	}
	return p
}

// dirArg reads a directory argument, by default the caller tab's directory;
// a relative path is taken from the caller tab's directory.
func (e *evaluation) dirArg(key string) (string, error) {
	dir, err := e.args.str(key)
	if err != nil {
		return "", err
	}
	switch {
	case dir == "" && e.self != nil:
		return e.self.Directory, nil
	case dir == "":
		return "", fmt.Errorf("argument %s is required outside a Phantom tab: %w", key, errdefs.ErrInvalidArgument)
	case filepath.IsAbs(dir):
		return filepath.Clean(dir), nil
	case e.self != nil && e.self.Directory != "":
		return filepath.Join(e.self.Directory, dir), nil
	}
	return "", fmt.Errorf("argument %s: %s is not an absolute path: %w", key, quote(dir), errdefs.ErrInvalidArgument)
}

// arguments are a call's arguments, decoded lazily.
type arguments map[string]json.RawMessage

func parseArgs(s string) (arguments, error) {
	a := arguments{}
	if strings.TrimSpace(s) == "" {
		return a, nil
	}
	if err := json.Unmarshal([]byte(s), &a); err != nil {
		return nil, fmt.Errorf("arguments are not a JSON object: %v: %w", err, errdefs.ErrInvalidArgument)
	}
	return a, nil
}

// str reads a string argument; absent or null is "".
func (a arguments) str(key string) (string, error) {
	raw, ok := a[key]
	if !ok || bytes.Equal(raw, []byte("null")) {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("argument %s must be a string: %w", key, errdefs.ErrInvalidArgument)
	}
	return s, nil
}

// strs reads a list of strings; absent or null is empty.
func (a arguments) strs(key string) ([]string, error) {
	raw, ok := a[key]
	if !ok || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	var s []string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("argument %s must be a list of strings: %w", key, errdefs.ErrInvalidArgument)
	}
	return s, nil
}

// GitProject is the project of dir: its git toplevel (`git -C dir
// rev-parse --show-toplevel`, run without a shell), else dir itself.
func GitProject(ctx context.Context, dir string) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "git", "-C", dir, "rev-parse", "--show-toplevel").Output()
	if top := strings.TrimSpace(string(out)); err == nil && filepath.IsAbs(top) {
		return top
	}
	return dir
}
