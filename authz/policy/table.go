package policy

// rule is one tool's line in the table: the capability it needs and how to
// find, from its arguments, what it touches. touches is nil for tools that
// need no capability.
type rule struct {
	capability Capability
	touches    func(e *evaluation) (Scope, string, error)
}

// free is a tool that needs no permission.
var free = rule{}

// tools is the policy table: MCP tool name → rule. Adding a tool is one line;
// a tool missing here is refused (fail closed). The names are the
// `(phantom.mcp.v1.tool).name` options in the protos.
var tools = map[string]rule{
	// Terminals (terminald).
	"list_terminals":  free,
	"read_output":     {Read, readTab},
	"create_terminal": free,
	"run_command":     {Run, runInTab},
	"focus_terminal":  free,
	"update_terminal": free,

	// Groups (terminald).
	"list_groups":       free,
	"create_group":      free,
	"update_group":      free,
	"move_to_group":     free,
	"list_theme_colors": free,

	// Editor (editord): acts on the caller's own window, which the
	// gateway checks; no capability.
	"list_panes":         free,
	"open_file":          free,
	"open_file_in_split": free,
	"focus_tab":          free,
	"close_tab":          free,
	"reveal_line":        free,

	// Diagnostics and language servers (lspd).
	"list_diagnostics":          free,
	"list_language_servers":     free,
	"restart_language_server":   free,
	"configure_language_server": {Configure, languageServer},

	// Worktrees (gitd).
	"list_worktrees":  {Worktree, worktrees},
	"add_worktree":    {Worktree, worktrees},
	"remove_worktree": {Worktree, worktrees},
	"tidy_worktrees":  {Worktree, worktrees},
}

// Capabilities returns the capability each known tool needs (None for the
// free ones).
func Capabilities() map[string]Capability {
	out := make(map[string]Capability, len(tools))
	for name, r := range tools {
		out[name] = r.capability
	}
	return out
}

// Known reports whether the policy table has a line for tool.
func Known(tool string) bool { _, ok := tools[tool]; return ok }

// readTab: read_output touches the tab named by terminal_id.
func readTab(e *evaluation) (Scope, string, error) {
	reach, t, why, err := e.reachTab("terminal_id")
	if err != nil {
		return 0, "", err
	}
	return reach, describeTab(t) + ", " + why, nil
}

// runInTab: run_command touches the tab named by terminal_id; the decisive
// argument is the command to be typed, shown whole. A call that would fail
// anyway (no such tab, a command that is not one line, a tab that exited or
// is busy) fails here, before any sheet.
func runInTab(e *evaluation) (Scope, string, error) {
	reach, t, why, err := e.reachTab("terminal_id")
	if err != nil {
		return 0, "", err
	}
	cmd, err := e.args.str("command")
	if err != nil {
		return 0, "", err
	}
	if err := checkCommand(cmd); err != nil {
		return 0, "", err
	}
	if err := checkTypable(t); err != nil {
		return 0, "", err
	}
	return reach, quote(cmd) + " typed into " + describeTab(t) + ", " + why, nil
}

// worktrees: the worktree tools touch the repository named by
// `repository`, by default the caller tab's directory.
func worktrees(e *evaluation) (Scope, string, error) {
	dir, err := e.dirArg("repository")
	if err != nil {
		return 0, "", err
	}
	subject := "repository " + printable(dir)
	for _, k := range []string{"path", "branch"} {
		if v, _ := e.args.str(k); v != "" {
			subject += ", " + k + " " + quote(v)
		}
	}
	reach, why := e.reachDir(dir)
	return reach, subject + "; " + why, nil
}

// languageServer: configure_language_server touches the workspace named by
// `workspace` (default the caller tab's directory); the decisive argument
// is the command line the server would start with.
func languageServer(e *evaluation) (Scope, string, error) {
	dir, err := e.dirArg("workspace")
	if err != nil {
		return 0, "", err
	}
	name, _ := e.args.str("server_id")
	if name == "" {
		name, _ = e.args.str("language")
	}
	cmd, _ := e.args.str("command")
	args, _ := e.args.strs("args")
	line := quote(cmd)
	for _, a := range args {
		line += " " + quote(a)
	}
	reach, why := e.reachDir(dir)
	return reach, "start " + printable(name) + " as " + line + " in " + printable(dir) + "; " + why, nil
}
