package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/phantom-dev/phantom/internal/agentconf"
	"github.com/phantom-dev/phantom/internal/paths"
)

// mcpCmd is `phantom mcp`: it writes, checks and removes the entry that
// starts Phantom's MCP bridge in each agent's own configuration file.
func mcpCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Add Phantom's MCP server to agents' configuration files, check it, remove it",
		Long: `Write the entry that starts Phantom's MCP bridge into each agent's own
configuration file: JSON for most agents, TOML for Codex. Agents: ` + strings.Join(agentconf.Names(), ", ") + `.

Only the "phantom" entry changes; other servers, settings and comments stay
byte for byte. The file is backed up first (<file>.phantom-backup-<time>,
the last 3 kept) and replaced atomically; a file that does not parse is
left alone and reported with its line and column. A symlinked file is
written through to its target.`,
	}
	cmd.AddCommand(mcpInstallCmd(), mcpUninstallCmd(), mcpStatusCmd())
	return cmd
}

// mcpFlags are the flags the three subcommands share.
type mcpFlags struct {
	project string
	json    bool
}

func (f *mcpFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.project, "project", "", "use the agents' files in project directory `DIR` instead of your user's")
	cmd.Flags().BoolVar(&f.json, "json", false, "print the result as JSON")
}

func mcpInstallCmd() *cobra.Command {
	var f mcpFlags
	cmd := &cobra.Command{
		Use:   "install [AGENT...]",
		Short: "Add Phantom's MCP server to agents (every agent found when none is named)",
		Long: `Add Phantom's MCP server to the named agents' configuration files, or to
every agent whose configuration directory exists. The entry runs this
phantom binary by its absolute path: +mcp-server --client=AGENT. An entry
already right is left alone; a stale one (binary moved, other arguments)
is rewritten.`,
		Example: "  phantom mcp install claude codex\n  phantom mcp install --project . cursor",
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMCP(cmd.OutOrStdout(), "install", f, args, false, func(t agentconf.Target, l agentconf.Launch, r *mcpAgentReport) error {
				res, err := agentconf.Install(t, l)
				r.Action, r.Backup = string(res.Action), res.Backup
				return err
			})
		},
	}
	f.register(cmd)
	return cmd
}

func mcpUninstallCmd() *cobra.Command {
	var f mcpFlags
	cmd := &cobra.Command{
		Use:   "uninstall [AGENT...]",
		Short: "Remove Phantom's MCP server from agents (every agent when none is named)",
		Long: `Remove the "phantom" entry from the named agents' configuration files, or
from every agent's. Nothing else in the files changes; a file without the
entry is not touched.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMCP(cmd.OutOrStdout(), "uninstall", f, args, true, func(t agentconf.Target, _ agentconf.Launch, r *mcpAgentReport) error {
				res, err := agentconf.Uninstall(t)
				r.Action, r.Backup = string(res.Action), res.Backup
				return err
			})
		},
	}
	f.register(cmd)
	return cmd
}

func mcpStatusCmd() *cobra.Command {
	var f mcpFlags
	cmd := &cobra.Command{
		Use:   "status [AGENT...]",
		Short: "Say, per agent, whether Phantom's MCP server is installed and in which file",
		Long: `Say for each agent whether its configuration file holds Phantom's entry:
not installed, installed, or installed but stale (it runs a binary that
moved or another phantom, or its arguments differ from what install would
write now).`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMCP(cmd.OutOrStdout(), "status", f, args, true, func(t agentconf.Target, l agentconf.Launch, r *mcpAgentReport) error {
				st, err := agentconf.Inspect(t, l)
				if err != nil {
					return err
				}
				r.Status, r.Reasons, r.Command, r.Args = string(st.State), st.Reasons, st.Command, st.Args
				return nil
			})
		},
	}
	f.register(cmd)
	return cmd
}

// mcpReport is what `phantom mcp … --json` prints.
type mcpReport struct {
	// Scope is "user" or "project".
	Scope   string           `json:"scope"`
	Project string           `json:"project,omitempty"`
	Binary  string           `json:"binary"`
	Socket  string           `json:"socket"`
	Agents  []mcpAgentReport `json:"agents"`
}

// mcpAgentReport is one agent's part of the report.
type mcpAgentReport struct {
	Agent string `json:"agent"`
	Title string `json:"title"`
	File  string `json:"file,omitempty"`
	// Found says whether the agent's configuration directory exists.
	Found bool `json:"found"`
	// Skipped says why the agent was left out.
	Skipped string `json:"skipped,omitempty"`
	// Action is what install or uninstall did: created, added, updated,
	// unchanged or removed.
	Action string `json:"action,omitempty"`
	Backup string `json:"backup,omitempty"`
	// Status is what status found: not-installed, installed or stale.
	Status  string   `json:"status,omitempty"`
	Reasons []string `json:"reasons,omitempty"`
	Command string   `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
	Error   string   `json:"error,omitempty"`
	// AgentHome says the file is the one Phantom's agent tabs read, in
	// the agent's home (see internal/config AgentHome).
	AgentHome bool `json:"agent_home,omitempty"`

	// lookedFor is the directory whose absence made Found false.
	lookedFor string
}

// runMCP selects the targets, applies do to each, and prints the outcome.
// all takes every agent when none is named; otherwise only those found.
func runMCP(w io.Writer, verb string, f mcpFlags, names []string, all bool, do func(agentconf.Target, agentconf.Launch, *mcpAgentReport) error) error {
	env, err := agentconf.EnvFrom(os.Getenv)
	if err != nil {
		return err
	}
	launch, err := bridgeLaunch()
	if err != nil {
		return err
	}
	targets, skips, err := agentconf.Select(names, env, f.project, all)
	if err != nil {
		return err
	}
	if len(targets) == 0 {
		var why []string
		for _, s := range skips {
			why = append(why, s.Agent.Title+": "+s.Reason)
		}
		return fmt.Errorf("no agent to configure (%s); name one, e.g. `phantom mcp install claude`", strings.Join(why, "; "))
	}
	rep := mcpReport{Scope: "user", Binary: launch.Binary, Socket: launch.Socket}
	if targets[0].Project != "" {
		rep.Scope, rep.Project = "project", targets[0].Project
	}
	failed := 0
	homes := map[string]bool{} // files in agent homes, reported as such
	if rep.Scope == "user" {
		for _, t := range agentHomeTargets(targets, os.Getenv) {
			homes[t.File] = true
			targets = append(targets, t)
		}
	}
	for _, t := range targets {
		r := mcpAgentReport{Agent: t.Agent.Name, Title: t.Agent.Title, File: t.File}
		if homes[t.File] {
			r.Title += " in Phantom's agent tabs"
			r.AgentHome = true
		}
		r.Found, r.lookedFor = t.Agent.Detect(env)
		if err := do(t, launch, &r); err != nil {
			r.Error = err.Error()
			failed++
		}
		rep.Agents = append(rep.Agents, r)
	}
	for _, s := range skips {
		found, _ := s.Agent.Detect(env)
		rep.Agents = append(rep.Agents, mcpAgentReport{Agent: s.Agent.Name, Title: s.Agent.Title, Found: found, Skipped: s.Reason})
	}
	sort.SliceStable(rep.Agents, func(i, j int) bool { return rep.Agents[i].Agent < rep.Agents[j].Agent })
	if f.json {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		printMCP(w, verb, rep)
	}
	switch {
	case failed == 0:
	case verb == "status":
		return fmt.Errorf("could not check %d of %d agents (see above)", failed, len(targets))
	default:
		return fmt.Errorf("%d of %d agents failed (see above); their files were left unchanged", failed, len(targets))
	}
	return nil
}

// printMCP writes one plain sentence per agent; verb is the subcommand.
func printMCP(w io.Writer, verb string, rep mcpReport) {
	restart := false
	for _, r := range rep.Agents {
		var line string
		switch {
		case r.Error != "":
			line = "failed: " + r.Error
		case r.Skipped != "":
			line = "skipped, " + r.Skipped
		case r.Status == string(agentconf.Installed):
			line = "installed in " + r.File
		case r.Status == string(agentconf.Stale):
			line = fmt.Sprintf("installed but stale in %s: %s; run `phantom mcp install %s`", r.File, strings.Join(r.Reasons, "; "), r.Agent)
		case r.Status == string(agentconf.NotInstalled):
			line = "not installed (" + r.File + ")"
			if !r.Found && rep.Scope == "user" {
				line = "not installed; not found (no " + r.lookedFor + ")"
			}
		case r.Action == string(agentconf.Created):
			line, restart = "installed in "+r.File+" (new file)", true
		case r.Action == string(agentconf.Added):
			line, restart = "installed in "+r.File, true
		case r.Action == string(agentconf.Updated):
			line, restart = "updated the stale entry in "+r.File, true
		case r.Action == string(agentconf.Removed):
			line, restart = "removed from "+r.File, true
		case r.Action == string(agentconf.Unchanged) && verb == "install":
			line = "already installed in " + r.File
		case r.Action == string(agentconf.Unchanged):
			line = "not installed in " + r.File + ", nothing to remove"
		}
		if r.Backup != "" {
			line += " (backup: " + filepath.Base(r.Backup) + ")"
		}
		fmt.Fprintf(w, "%s: %s\n", r.Title, line)
	}
	if restart {
		fmt.Fprintln(w, "Agents read these files when they start: restart running ones.")
	}
}

// bridgeLaunch is how agents start this phantom's bridge: its binary by
// absolute path (symlinks resolved, so a moved or replaced link does not
// silently change what runs) and this instance's socket.
func bridgeLaunch() (agentconf.Launch, error) {
	exe, err := os.Executable()
	if err != nil {
		return agentconf.Launch{}, fmt.Errorf("cannot find this phantom binary's path: %w", err)
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		return agentconf.Launch{}, fmt.Errorf("cannot resolve this phantom binary's path: %w", err)
	}
	if strings.Contains(exe, string(filepath.Separator)+"go-build") {
		return agentconf.Launch{}, fmt.Errorf("this phantom runs from a temporary `go run` build (%s), which agents could not start later: build it (go build ./cmd/phantom) and run that binary", exe)
	}
	l, err := paths.Default()
	if err != nil {
		return agentconf.Launch{}, err
	}
	return agentconf.Launch{Binary: exe, Socket: l.MCPSocket}, nil
}
