// Package sandbox confines the programs of agent tabs with Landlock.
//
// A tab started with an agent (create_terminal's agent, `phantom new
// --agent`) or with `phantom new --sandbox` runs its program under a
// Landlock domain where the kernel offers ABI 6 or later. Inside it:
//
//   - reading and executing stay allowed everywhere;
//   - writing — opening for write, truncating, creating, removing, renaming,
//     linking — is allowed only beneath the Rules: the tab's directory
//     (widened to its git working tree, plus the repository's common git
//     directory for a linked worktree), the temporary directories, the
//     agent's own configuration and cache paths from config.json, and a few
//     devices a terminal program needs (/dev/null, /dev/tty, /dev/pts/…);
//   - signals and abstract Unix sockets are scoped (ABI 6): the tab cannot
//     signal, or connect to an abstract socket of, any process outside its
//     domain — the daemons, the human's clients, the human's other tabs.
//     At every ABI Landlock also refuses to let it ptrace a process outside
//     the domain, or open its /proc/<pid>/mem; a non-root tab cannot read
//     such a process's /proc/<pid>/environ either (root still can, on the
//     kernels measured);
//   - from ABI 9, connecting to a path socket is allowed only to the MCP
//     socket's directory (and to sockets the tab created itself). Before
//     ABI 9 the kernel cannot restrict path-socket connects at all.
//
// Network access is not restricted: agents talk to their model's API.
//
// # Protected paths
//
// Landlock only ever allows: a rule on a directory covers everything
// beneath it, and nothing can be carved out of it again. So when a
// writable root contains a protected path — Phantom's config, state,
// runtime and log directories, the MCP socket's directory, the phantom
// binary, or the user's shell startup files — Compute replaces that root by
// its entries minus the one that leads to the protected path, recursively.
// The consequence: in such an expanded directory (say the home directory,
// when it is the tab's directory) the tab can write the existing entries
// but cannot create, remove or rename entries directly in it. Symbolic
// links among those entries are left out (Landlock would follow them), and
// so are sockets, FIFOs and devices. A root inside a protected path is
// dropped.
//
// # Why a launcher
//
// landlock_restrict_self confines the calling thread and what it executes
// afterwards, and needs no_new_privs (or CAP_SYS_ADMIN), which stays set
// across execve: setuid programs such as sudo cannot gain privileges in a
// sandboxed tab. terminald must not confine itself, so it starts the tab's
// program through the phantom binary itself:
//
//	phantom +sandbox --write=DIR… --write-file=FILE… --device=DEV… --connect=SOCK… -- PROGRAM ARG…
//
// The launcher (Exec) applies the rules on one locked OS thread and execs
// PROGRAM from that thread, so the tab's leader stays the very process
// terminald started and tracks (same pid, same start time). Rules travel on
// the command line, which exec replaces before the program runs.
//
// # Older kernels
//
// Below ABI 6 (or without Landlock) a sandboxed tab still starts, but
// terminald writes Unavailable's one-line warning into it and reports it as
// not sandboxed; Describe says the same for `phantom status`. The launcher
// itself never downgrades: asked to sandbox on a kernel that cannot, it
// fails.
package sandbox
