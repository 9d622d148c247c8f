package gateway

import (
	"strings"

	"github.com/phantom-dev/phantom/internal/toolreg"
	mcpv1 "github.com/phantom-dev/phantom/proto/phantom/mcp/v1"
)

// toolDescription is a tool's description as tools/list shows it: its
// method's proto comment, then what the tool registry says about calling
// it that the comment need not repeat, each in a paragraph of its own
// made by one function below from the tool's option, so that the words
// cannot drift from the rules authz applies.
func toolDescription(rt *toolreg.Tool, docs comments) string {
	paras := []string{docs[rt.Descriptor.FullName()]}
	for _, say := range []func(*toolreg.Tool) string{callerSentence, permissionSentence, waitSentence} {
		if s := say(rt); s != "" {
			paras = append(paras, s)
		}
	}
	return strings.Join(paras, "\n\n")
}

// callerSentence says that a tool needing a window needs a caller in a
// tab.
func callerSentence(rt *toolreg.Tool) string {
	if !rt.Option.GetNeedsTab() {
		return ""
	}
	return "Only for a caller inside a Phantom terminal tab (its window's editor)."
}

// permissionSentence says when a call may wait for the human on a
// permission sheet: for every tool that needs a capability, whatever its
// reach — authz asks for the caller's own tab and project too unless a
// grant covers them (no reach is free). It names the capability, the
// further ones a set field brings (run_command's wait_seconds: read) and
// the field deciding the reach. Free tools never wait for the human and
// get no sentence.
func permissionSentence(rt *toolreg.Tool) string {
	if toolreg.Free(rt.Capability) {
		return ""
	}
	var b strings.Builder
	b.WriteString("May wait for the human on a permission sheet unless a grant covers it: needs the " +
		toolreg.CapabilityName(rt.Capability) + " permission")
	for _, a := range rt.Also {
		b.WriteString(" (and " + toolreg.CapabilityName(a.Capability) + " with " + string(a.Field.Name()) + ")")
	}
	switch rt.Reach.Kind {
	case mcpv1.ReachKind_REACH_KIND_TAB:
		b.WriteString(" for the tab in " + string(rt.Reach.Field.Name()) + ", the caller's own too")
		if rt.FreeForOpenedTabs {
			b.WriteString("; none for a tab the caller opened")
		}
		b.WriteString(".")
	case mcpv1.ReachKind_REACH_KIND_DIRECTORY:
		b.WriteString(" for the project of " + string(rt.Reach.Field.Name()) + " (default the caller tab's, which asks too).")
	default:
		b.WriteString(".")
	}
	return b.String()
}

// serverInstructions tell the model what the server is for, and which of
// its tools may wait for the human (the tool table's, so the text cannot
// fall behind the tools).
func serverInstructions(tools *toolTable) string {
	var asking []string
	for _, t := range tools.sorted() {
		if permissionSentence(t.reg) != "" {
			asking = append(asking, t.name)
		}
	}
	s := "Phantom's terminal tabs (list_terminals, create_terminal, read_output, run_command), tab groups, " +
		"the window's editor (a Neovim in a tab of the caller's window: its tabs are files, not terminals), " +
		"language servers with their diagnostics, and git worktrees. A terminal_id is a tab id list_terminals gives."
	if len(asking) > 0 {
		s += " " + strings.Join(asking, ", ") + " may wait for the human to answer a permission sheet " +
			"unless a grant covers the call (each description says when); the other tools never wait for the human."
	}
	return s
}
