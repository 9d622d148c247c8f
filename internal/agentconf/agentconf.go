// Package agentconf writes Phantom's MCP server entry into coding agents'
// own configuration files (Claude Code, Codex CLI, Gemini CLI, Cursor,
// VS Code, Zed, opencode, Windsurf), checks it and removes it.
//
// It edits files the way a careful person would by hand: only our entry's
// bytes change, every other server, setting, comment and blank line stays
// as it was; a file it cannot parse is refused with its line and column;
// the old file is backed up first and the new one replaces it atomically.
// JSON files are edited through a span-recording parser (jsonc.go,
// jsonedit.go), Codex's TOML line by line around our table (toml.go). The
// table in agents.go is the one place that says which agent reads which
// file, in which format, with which entry.
package agentconf

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// Target is one agent's configuration file in one scope.
type Target struct {
	// Agent is whose file it is.
	Agent Agent
	// File is the configuration file's path.
	File string
	// Project is the project directory, or "" for the user's own file.
	Project string
}

// Skip is an agent left out of a run that named no agent, and why.
type Skip struct {
	Agent Agent
	// Reason says why, in words that follow "skipped, ".
	Reason string
}

// Select turns the agents named on a command line into targets: each
// agent's user file, or with project != "" the file it reads in that
// project directory. With no names it takes every agent that seems
// installed (all of them when all is set, as status does), and says why it
// skipped the others. A named agent that reads no project file, or an
// unknown name, is an error, and nothing is selected.
func Select(names []string, e Env, project string, all bool) ([]Target, []Skip, error) {
	if project != "" {
		abs, err := filepath.Abs(project)
		if err != nil {
			return nil, nil, fmt.Errorf("project directory %s: %w", project, err)
		}
		if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
			return nil, nil, fmt.Errorf("project directory %s does not exist or is not a directory", abs)
		}
		project = abs
	}
	var chosen []Agent
	for _, n := range names {
		a, err := Lookup(n)
		if err != nil {
			return nil, nil, err
		}
		if !slices.ContainsFunc(chosen, func(c Agent) bool { return c.Name == a.Name }) {
			chosen = append(chosen, a)
		}
	}
	named := len(chosen) > 0
	if !named {
		chosen = Agents()
	}
	var targets []Target
	var skips []Skip
	for _, a := range chosen {
		if !named && !all {
			if ok, dir := a.Detect(e); !ok {
				skips = append(skips, Skip{a, "not found (no " + dir + ")"})
				continue
			}
		}
		file := a.UserFile(e)
		if project != "" {
			var ok bool
			if file, ok = a.ProjectFile(project); !ok {
				msg := fmt.Sprintf("%s reads no project file, only %s", a.Title, a.UserFile(e))
				if named {
					return nil, nil, fmt.Errorf("%s: install it for your user, without --project", msg)
				}
				skips = append(skips, Skip{a, "reads no project file (only " + a.UserFile(e) + ")"})
				continue
			}
		}
		targets = append(targets, Target{Agent: a, File: file, Project: project})
	}
	return targets, skips, nil
}

func (t Target) perms() perms {
	if t.Project != "" {
		return projectPerms
	}
	return userPerms
}

// FileError is a configuration file we could not use, and why.
type FileError struct {
	File string
	Err  error
}

// Error is "<file>: <what went wrong>".
func (e *FileError) Error() string { return e.File + ": " + e.Err.Error() }

// Unwrap gives the cause, a *SyntaxError for a file that does not parse.
func (e *FileError) Unwrap() error { return e.Err }

func (t Target) fail(err error) error {
	if err == nil {
		return nil
	}
	return &FileError{File: t.File, Err: err}
}

// State is what a file holds of our entry.
type State string

const (
	// NotInstalled: no entry called phantom.
	NotInstalled State = "not-installed"
	// Installed: our entry, exactly as install would write it now.
	Installed State = "installed"
	// Stale: an entry called phantom that runs another binary (one that
	// moved, say) or with other arguments or settings.
	Stale State = "stale"
)

// Status is what Inspect found.
type Status struct {
	State State
	// Reasons say why an entry is stale, in plain words.
	Reasons []string
	// Command and Args are how the entry starts the bridge, when installed.
	Command string
	Args    []string
}

// Inspect reads the target's file and compares its entry with what
// Install would write for l.
func Inspect(t Target, l Launch) (Status, error) {
	src, err := readTarget(t.File)
	if err != nil || src == nil {
		return Status{State: NotInstalled}, t.fail(err)
	}
	got, ok, err := t.Agent.file.get(src, EntryName)
	if err != nil || !ok {
		return Status{State: NotInstalled}, t.fail(err)
	}
	st := Status{State: Installed}
	st.Command, st.Args = launchOf(got)
	if st.Reasons = staleReasons(t.Agent.want(l), got); len(st.Reasons) > 0 {
		st.State = Stale
	}
	return st, nil
}

// readTarget reads a file through symlinks; a missing file is nil, nil.
func readTarget(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		if _, lerr := os.Lstat(path); lerr == nil { // a dangling symlink
			_, err = resolve(path)
			return nil, err
		}
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read it: %w", unwrapPath(err))
	}
	return b, nil
}

// launchOf is how an entry starts its server: command and args, or
// opencode's single command array.
func launchOf(entry any) (string, []string) {
	m, _ := entry.(map[string]any)
	strs := func(v any) []string {
		a, _ := v.([]any)
		var out []string
		for _, s := range a {
			str, _ := s.(string)
			out = append(out, str)
		}
		return out
	}
	switch c := m["command"].(type) {
	case string:
		return c, strs(m["args"])
	case []any:
		if all := strs(c); len(all) > 0 {
			return all[0], all[1:]
		}
	}
	return "", nil
}

// staleReasons compares the entry found with the one we want. Keys the user
// added to our entry do not make it stale.
func staleReasons(want fields, got any) []string {
	m, ok := got.(map[string]any)
	if !ok {
		return []string{"the entry is not an object"}
	}
	var reasons []string
	wantCmd, wantArgs := launchOf(plain(want))
	gotCmd, gotArgs := launchOf(m)
	switch {
	case gotCmd == wantCmd:
	case gotCmd == "":
		reasons = append(reasons, "it has no command")
	case !exists(gotCmd):
		reasons = append(reasons, fmt.Sprintf("it runs %s, which no longer exists (the binary moved)", gotCmd))
	default:
		reasons = append(reasons, fmt.Sprintf("it runs %s, not this phantom (%s)", gotCmd, wantCmd))
	}
	if !slices.Equal(gotArgs, wantArgs) {
		reasons = append(reasons, fmt.Sprintf("its arguments are %q, not %q", gotArgs, wantArgs))
	}
	for _, f := range want {
		if f.key == "command" || f.key == "args" {
			continue
		}
		switch v, ok := m[f.key]; {
		case !ok:
			reasons = append(reasons, fmt.Sprintf("it lacks %s", f.key))
		case !sameValue(v, f.value):
			reasons = append(reasons, fmt.Sprintf("its %s is %s, not %s", f.key, show(v), show(f.value)))
		}
	}
	return reasons
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// show renders a value for a message.
func show(v any) string {
	if f, ok := v.(fields); ok {
		return renderJSON(f, "", "", "")
	}
	b := plain(v)
	if s, ok := b.(string); ok {
		return quoteString(s)
	}
	return fmt.Sprint(b)
}

// Action is what Install or Uninstall did to a file.
type Action string

const (
	// Created: the file did not exist; it now holds our entry.
	Created Action = "created"
	// Added: our entry was added to an existing file.
	Added Action = "added"
	// Updated: a stale entry was replaced.
	Updated Action = "updated"
	// Unchanged: the entry was already as it should be (or, uninstalling,
	// there was none); the file was not touched.
	Unchanged Action = "unchanged"
	// Removed: our entry was removed.
	Removed Action = "removed"
)

// Result is what Install or Uninstall did.
type Result struct {
	Action Action
	// Backup is the copy of the file as it was, or "" when it was not
	// changed or did not exist.
	Backup string
}

// Install writes our entry for l into the target's file, or replaces a
// stale one; an entry that is already right leaves the file untouched.
func Install(t Target, l Launch) (Result, error) {
	want := t.Agent.want(l)
	action := Unchanged
	changed, backup, err := editFile(t.File, t.perms(), func(old []byte, exists bool) ([]byte, error) {
		got, ok, err := t.Agent.file.get(old, EntryName)
		switch {
		case err != nil:
			return nil, err
		case !ok && !exists:
			action = Created
		case !ok:
			action = Added
		case len(staleReasons(want, got)) > 0:
			// The entry is ours: it is rewritten whole, and keys the user
			// added to it go (the backup keeps them).
			action = Updated
		default:
			action = Unchanged
			return old, nil
		}
		return t.Agent.file.set(old, EntryName, want)
	})
	if err != nil {
		return Result{}, t.fail(err)
	}
	if !changed {
		action = Unchanged
	}
	return Result{Action: action, Backup: backup}, nil
}

// Uninstall removes our entry from the target's file, and nothing else.
func Uninstall(t Target) (Result, error) {
	if _, err := os.Lstat(t.File); os.IsNotExist(err) {
		return Result{Action: Unchanged}, nil // never create a file to remove nothing from it
	}
	changed, backup, err := editFile(t.File, t.perms(), func(old []byte, _ bool) ([]byte, error) {
		out, _, err := t.Agent.file.remove(old, EntryName)
		return out, err
	})
	if err != nil {
		return Result{}, t.fail(err)
	}
	if !changed {
		return Result{Action: Unchanged}, nil
	}
	return Result{Action: Removed, Backup: backup}, nil
}
