package audit

// Events a daemon reports (authz's RecordEvent): acts done for an agent
// on calls that needed no grant, yet reach the human. Client, Tab and
// PID are the agent; Tool the tool it called; Target the tab; Subject
// says in words what happened.
const (
	// FocusMoved: an agent's focus_terminal switched every attached client
	// of the tab's window to the tab.
	FocusMoved = "focus_moved"
	// FocusNotice: an agent's focus_terminal found an attached client in
	// use (its human typing): that client was not switched and shows a
	// notice instead.
	FocusNotice = "focus_notice"
	// FocusNoClient: an agent's focus_terminal found nobody attached to
	// the tab's window; only the window's focused tab was set.
	FocusNoClient = "focus_no_client"
	// RunNotTyped: an agent's run_command was allowed but terminald typed
	// nothing (the command line held the human's text, or the tab was
	// busy or gone by then), or typed a line the shell held open for
	// more, which terminald cancelled with Ctrl-C before anything ran.
	RunNotTyped = "run_not_typed"
	// KeysNotTyped: an agent's send_keys was allowed but terminald typed
	// nothing (the tab closed in between).
	KeysNotTyped = "keys_not_typed"
)
