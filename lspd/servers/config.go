// Package servers runs language servers for lspd: one per (language,
// workspace root, confinement), started on demand when a file asked about
// needs one, restarted with backoff when it crashes or stops answering,
// stopped when idle long. It keeps each server's diagnostics with the disk
// version of the file they were computed from, which is what lets lspd
// promise fresh answers (see Registry.Diagnostics).
//
// A server runs what its workspace's files say (plugins, build commands,
// compile flags), so it runs in the confinement of the caller it serves
// (Confinement): a sandboxed tab's calls get servers in that tab's sandbox,
// started through the sandbox launcher; other agents' calls servers in a
// read-only sandbox; only the human's own calls servers outside any.
// Because the confinement is part of a server's key, a workspace shared by
// a sandboxed tab and anyone else never hands an agent's call to a server
// with more rights, and an agent's configuration (Registry.Configure)
// stays with the one server it was made for.
package servers

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Config says how one language's server starts.
type Config struct {
	// Command is the program and its arguments.
	Command []string `json:"command"`
	// Env are extra environment variables.
	Env map[string]string `json:"env,omitempty"`
	// InitializationOptions is LSP's initializationOptions (a JSON object).
	InitializationOptions json.RawMessage `json:"initialization_options,omitempty"`
	// Settings answer workspace/configuration (a JSON object, by section).
	Settings json.RawMessage `json:"settings,omitempty"`
	// Extensions are the file name extensions, without the dot.
	Extensions []string `json:"extensions,omitempty"`
	// RootMarkers are groups of file names that mark a workspace root,
	// tried in order: the nearest directory holding a name of the first
	// group that has one wins.
	RootMarkers [][]string `json:"root_markers,omitempty"`
}

// Defaults are the servers known without configuration.
func Defaults() map[string]Config {
	git := []string{".git"}
	return map[string]Config{
		"go":     {Command: []string{"gopls"}, Extensions: []string{"go"}, RootMarkers: [][]string{{"go.work", "go.mod"}, git}},
		"c":      {Command: []string{"clangd"}, Extensions: []string{"c", "h"}, RootMarkers: [][]string{{"compile_commands.json"}, git}},
		"cpp":    {Command: []string{"clangd"}, Extensions: []string{"cc", "cpp", "cxx", "hh", "hpp", "hxx"}, RootMarkers: [][]string{{"compile_commands.json"}, git}},
		"python": {Command: []string{"pylsp"}, Extensions: []string{"py"}, RootMarkers: [][]string{{"pyproject.toml", "setup.py"}, git}},
	}
}

// Merge returns c with what u sets replacing it: a command replaces the
// command line, env entries are added, JSON objects and extensions
// replace.
func (c Config) Merge(u Config) Config {
	out := c.clone()
	if len(u.Command) > 0 {
		out.Command = slices.Clone(u.Command)
	}
	if len(u.Env) > 0 {
		if out.Env == nil {
			out.Env = map[string]string{}
		}
		maps.Copy(out.Env, u.Env)
	}
	if len(u.InitializationOptions) > 0 {
		out.InitializationOptions = u.InitializationOptions
	}
	if len(u.Settings) > 0 {
		out.Settings = u.Settings
	}
	if len(u.Extensions) > 0 {
		out.Extensions = slices.Clone(u.Extensions)
	}
	if len(u.RootMarkers) > 0 {
		out.RootMarkers = u.RootMarkers
	}
	return out
}

func (c Config) clone() Config {
	c.Command = slices.Clone(c.Command)
	c.Env = maps.Clone(c.Env)
	c.Extensions = slices.Clone(c.Extensions)
	return c
}

// Check says what is wrong with c, naming language.
func (c Config) Check(language string) error {
	if len(c.Command) == 0 || c.Command[0] == "" {
		return fmt.Errorf("language server %q: empty command", language)
	}
	for _, f := range []struct {
		name string
		v    json.RawMessage
	}{{"initialization_options", c.InitializationOptions}, {"settings", c.Settings}} {
		if len(f.v) == 0 {
			continue
		}
		var obj map[string]any
		if err := json.Unmarshal(f.v, &obj); err != nil {
			return fmt.Errorf("language server %q: %s must be a JSON object: %v", language, f.name, err)
		}
	}
	for k := range c.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return fmt.Errorf("language server %q: bad environment variable name %q", language, k)
		}
	}
	return nil
}

// stateFile is lspd's own record of configure_language_server's changes,
// kept apart from the user's hand-written config.json so that lspd never
// rewrites the user's file; its entries win over config.json's.
type stateFile struct {
	path string
}

// load reads the saved configurations; a missing file is none.
func (s stateFile) load() (map[string]Config, error) {
	if s.path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(s.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read language server settings %s: %w", s.path, err)
	}
	var out map[string]Config
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("language server settings %s: %w", s.path, err)
	}
	return out, nil
}

// save records c for language, atomically.
func (s stateFile) save(language string, c Config) error {
	if s.path == "" {
		return nil
	}
	all, err := s.load()
	if err != nil {
		return err
	}
	if all == nil {
		all = map[string]Config{}
	}
	all[language] = c
	b, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return fmt.Errorf("save language server settings: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(s.path), ".lspd-*.json")
	if err != nil {
		return fmt.Errorf("save language server settings: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("save language server settings %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("save language server settings %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), s.path); err != nil {
		return fmt.Errorf("save language server settings %s: %w", s.path, err)
	}
	return nil
}
