package editor

// which names one editor of a window: the window's own (owner ""), which
// the human opened with `phantom edit` or editord started for an
// unsandboxed caller, or the editor of the sandboxed agent tab owner.
type which struct {
	window, owner string
}

// sandboxed reports whether this editor runs sandboxed: it is a sandboxed
// agent tab's.
func (w which) sandboxed() bool { return w.owner != "" }

// editorFor decides which editor of its window caller c, in the tab info
// describes, drives.
//
// A caller in an unsandboxed tab drives the window's own editor, as ever.
// A caller in a sandboxed tab never does: that Neovim runs as the human,
// unconfined, and an agent steering it (opening files the agent wrote,
// whose modelines and plugins run there, and whatever ops it may ask for
// next) would act through it beyond its sandbox. It gets an editor of its
// own instead, one per sandboxed tab and window, started in a tab with
// its sandbox (invariant 2: no deputy). One per tab, not one shared by
// every sandboxed tab of the window: two sandboxed tabs may have
// different confinements (directories, agents' paths), and an editor
// confined as one of them must not be another's deputy.
func editorFor(c Caller, info TabInfo) which {
	if info.Sandboxed {
		return which{window: info.Window, owner: c.TabID}
	}
	return which{window: info.Window}
}
