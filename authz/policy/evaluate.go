package policy

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/phantom-dev/phantom/internal/errdefs"
	"github.com/phantom-dev/phantom/internal/project"
	"github.com/phantom-dev/phantom/internal/toolreg"
)

// Policy evaluates tool calls against the rules of the tool registry.
type Policy struct {
	tabs    Lister
	project Projector
	reg     *toolreg.Registry
	err     error // the registry or the specials did not load: refuse all
}

// New returns a policy on Phantom's tool registry that learns about tabs
// from tabs and names the projects of directory arguments with project
// (DirProject when nil).
func New(tabs Lister, project Projector) *Policy {
	reg, err := toolreg.Default()
	return newPolicy(tabs, project, reg, err)
}

func newPolicy(tabs Lister, project Projector, reg *toolreg.Registry, err error) *Policy {
	if project == nil {
		project = DirProject
	}
	if err == nil {
		err = checkSpecials(reg)
	}
	return &Policy{tabs: tabs, project: project, reg: reg, err: err}
}

// Evaluate works out what a call of tool with argsJSON by caller needs.
// The arguments are read into the tool's typed request (protojson), and
// the reach and subject fields are read from it by descriptor. An unknown
// tool, arguments that do not fit the request or a tab that does not
// exist is an error of an errdefs kind whose message a model can act on.
func (p *Policy) Evaluate(ctx context.Context, c Caller, tool, argsJSON string) (Need, error) {
	if p.err != nil {
		return Need{}, loadError(p.err)
	}
	t, ok := p.reg.ByName(tool)
	if !ok {
		return Need{}, fmt.Errorf("tool %q is not in Phantom's permission table, so it is refused: %w", tool, errdefs.ErrInvalidArgument)
	}
	capability, err := capabilityOf(t.Capability)
	if err != nil {
		return Need{}, fmt.Errorf("tool %q is refused: %v: %w", tool, err, errdefs.ErrInvalidArgument)
	}
	need := Need{Tool: tool, Capability: capability}
	if need.Capability == None {
		return need, nil
	}
	req, err := decodeRequest(t, argsJSON)
	if err != nil {
		return Need{}, err
	}
	list, err := p.tabs.Tabs(ctx)
	if err != nil {
		return Need{}, fmt.Errorf("cannot learn the tabs from terminald, so the call is refused: %v: %w", err, errdefs.ErrUnavailable)
	}
	e := &evaluation{ctx: ctx, tool: t, req: req, tabs: list, project: p.project, projects: map[string]string{},
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
		need.Project = tabProject(self)
	}
	need.Reach, need.Subject, err = e.touches()
	if err != nil {
		return Need{}, err
	}
	need.Target, need.Typed = e.target, e.typed
	// One rule for every tool that says so: a tab the caller opened is
	// no more privileged than the caller (it runs in its sandbox).
	need.Free = t.FreeForOpenedTabs && e.openedTarget
	for _, a := range t.Also {
		if !req.Has(a.Field) {
			continue
		}
		also, err := capabilityOf(a.Capability)
		if err != nil || !also.Valid() {
			return Need{}, fmt.Errorf("tool %q is refused: its further capability when %s is set is not a real one: %w",
				tool, a.Field.Name(), errdefs.ErrInvalidArgument)
		}
		need.Also = append(need.Also, also)
		need.Subject += "; and " + also.String() + ": it returns the output (" + string(a.Field.Name()) + ")"
	}
	need.Call = e.call(need.Also)
	return need, nil
}

// decodeRequest reads argsJSON into the tool's request message; empty
// arguments are the empty request.
func decodeRequest(t *toolreg.Tool, argsJSON string) (protoreflect.Message, error) {
	m := t.Request.New()
	if strings.TrimSpace(argsJSON) == "" {
		return m, nil
	}
	if err := protojson.Unmarshal([]byte(argsJSON), m.Interface()); err != nil {
		return nil, fmt.Errorf("the arguments of %s do not fit its request %s: %v: %w",
			t.Name, m.Descriptor().FullName(), err, errdefs.ErrInvalidArgument)
	}
	return m, nil
}

// evaluation is one call being evaluated.
type evaluation struct {
	ctx      context.Context
	tool     *toolreg.Tool
	req      protoreflect.Message
	tabs     []TabInfo
	self     *TabInfo // nil outside any tab
	escaped  bool     // the caller runs inside Phantom but in no tab
	project  Projector
	projects map[string]string // directory → project, per call
	target   string            // what the call acts on: a tab id or a directory
	typed    string            // run_command's exact text
	// openedTarget is true when the reach field names a tab the caller
	// opened (see opened), not its own.
	openedTarget bool
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

// dirArg reads the directory field f, by default the caller tab's
// directory; a relative path is taken from the caller tab's directory.
func (e *evaluation) dirArg(f protoreflect.FieldDescriptor) (string, error) {
	dir := e.req.Get(f).String()
	switch {
	case dir == "" && e.self != nil:
		return e.self.Directory, nil
	case dir == "":
		return "", fmt.Errorf("argument %s is required outside a Phantom tab: %w", f.Name(), errdefs.ErrInvalidArgument)
	case filepath.IsAbs(dir):
		return filepath.Clean(dir), nil
	case e.self != nil && e.self.Directory != "":
		return filepath.Join(e.self.Directory, dir), nil
	}
	return "", fmt.Errorf("argument %s: %s is not an absolute path: %w", f.Name(), quote(dir), errdefs.ErrInvalidArgument)
}

// DirProject is the project of a directory argument (internal/project):
// links resolved, the nearest directory holding a .git entry, else the
// directory. It reads no repository config and runs no git, so nothing a
// tab writes into a repository moves it.
func DirProject(_ context.Context, dir string) string { return project.Of(dir) }

// tabProject is the project a tab works in, as terminald decided it; a
// tab terminald named none for gets a key of its own, which no grant of a
// real project matches.
func tabProject(t TabInfo) string {
	if t.Project != "" {
		return t.Project
	}
	return "(tab " + t.ID + ", project unknown)"
}
