// Package sandbox confines the programs of agent tabs: with Landlock, and
// with the walls of a private user and mount namespace where the machine
// allows unprivileged user namespaces.
//
// A tab started with an agent (create_terminal's agent, `phantom new
// --agent`) or with `phantom new --sandbox` runs its program sandboxed
// where the kernel offers Landlock ABI 6 or later. Inside it:
//
//   - reading and executing stay allowed everywhere;
//   - writing — opening for write, truncating, creating, removing, renaming,
//     linking — is allowed only beneath the Rules: the tab's directory
//     (widened to its git working tree, plus the repository's common git
//     directory for a linked worktree), the temporary directories, the
//     agent's own configuration and cache paths from config.json, and a few
//     devices a terminal program needs (/dev/null, /dev/tty, its PTYs…);
//   - signals and abstract Unix sockets are scoped (ABI 6): the tab cannot
//     signal, or connect to an abstract socket of, any process outside its
//     domain — the daemons, the human's clients, the human's other tabs.
//     At every ABI Landlock also refuses to let it ptrace a process outside
//     the domain, or open its /proc/<pid>/mem, fd or root; a non-root tab
//     cannot read such a process's /proc/<pid>/environ either (root still
//     can, on the kernels measured).
//
// Network access is not restricted: agents talk to their model's API.
//
// # The walls (Rules.Isolate)
//
// Landlock cannot keep a tab from opening another terminal it may write
// by file mode (every PTY of the user is), nor, before ABI 9 (on no kernel
// yet), from connecting to a path socket. The walls can: the launcher
// starts the program in a new user namespace (mapping only the user's own
// uid and gid) and mount namespace, where it builds (see buildWalls):
//
//   - a private /dev: a tmpfs holding only the harmless devices bound from
//     the host, a new devpts instance for /dev/pts with its /dev/ptmx, and
//     /dev/shm. No other tab's /dev/pts/N, no console or virtual terminal,
//     not the human's attach terminal has a name in it. The tab keeps its
//     own terminal on fds 0–2 and as /dev/tty, and the PTYs it makes
//     (script, tmux, expect) come from its own devpts. What changes: its
//     own PTY has no name there, so tty(1) says "not a tty" and ttyname(3)
//     fails; programs that reopen their terminal by name should use
//     /dev/tty;
//   - a private /tmp: a fresh directory of the tab's own on the host
//     (under Phantom's runtime directory, tmp/<tab id>/run-*, so the human
//     can look into it; removed when the program ends) bound on /tmp. This
//     also leaves Phantom's runtime directory out of the tab's /tmp when
//     XDG_RUNTIME_DIR is unset and it lives there;
//   - fresh, private tmpfs mounts over $XDG_RUNTIME_DIR and Phantom's
//     runtime directory: the session bus, the daemons' and the holder's
//     sockets, the editor's sockets, and the sockets of most desktop
//     services and agents are gone. The tab may write these fresh copies;
//   - kept paths bound back where those covered them (Rules.Keep): the
//     tab's directory and writable paths, the home directory, the shell
//     integration, the MCP socket and the sockets the human allowed
//     (config.Sandbox.Sockets). The directories made to reach them stay
//     read-only;
//   - masked sockets: every socket found as the tab starts in the home
//     directory and /run (breadth first, MaxScanDepth levels, MaxScan
//     entries per root) but the allowed ones gets /dev/null bound over it,
//     so connecting to it is refused: docker.sock, ssh-agent and ssh
//     ControlMaster sockets, gpg-agent, the system bus;
//   - every mount read-only but the writable paths (bound again, writable)
//     and /proc, whose sysctls, SysRq trigger and interrupt, bus and fs
//     settings are read-only for a root tab (others' file modes refuse
//     those writes already, and a whole /proc lets a nested sandbox mount
//     its own);
//   - a connect gate (terminald/sandbox/gate): the second stage's last
//     step is a seccomp filter that hands every connect to the monitor,
//     which performs it itself — to the MCP socket (with a line vouching
//     for the caller), to the sandbox's own listening sockets and to the
//     sockets the human allowed, and to any network address — and refuses
//     every other Unix socket, whenever and wherever it was made; Unix
//     datagram sockets and io_uring are refused outright. The masking
//     above is then a second wall, and what a tab lists in its /run and
//     home directory;
//   - no capabilities: the program, root's too, starts with empty sets,
//     bounding set included, so it cannot undo any of this; the mounts it
//     inherits are locked in any namespace it makes below.
//
// Writes are then held by the read-only mounts, not by Landlock, and
// Landlock only scopes signals and abstract sockets: a domain that handles
// any file-system right forbids every mount, which would break the nested
// sandboxes agents run (Codex runs its commands under bubblewrap, which
// mounts in a user namespace of its own). Inside the walls, such a nested
// sandbox works and can write no more than the tab.
//
// What the walls do not hold, precisely:
//
//   - a path socket created after the tab started, in a directory the tab
//     can see, is not masked — but the connect gate above refuses it;
//   - a kept socket is the inode that existed at the tab's start: a
//     server that makes its socket anew is out of reach until the tab
//     starts again;
//   - /proc stays writable where file modes allow, so the tab can raise
//     the OOM score or lower the priority (autogroup) of the human's
//     processes; their memory, fds and environment stay behind Landlock;
//   - supplementary groups show as nogroup, other users' files as nobody;
//   - a tab run by root cannot start a nested sandbox that maps root:
//     mapping uid 0 into a new user namespace takes CAP_SETFCAP, which
//     would let it set file capabilities that hold on the host; nor one
//     that mounts a /proc of its own (its /proc is partly covered);
//   - on a machine without unprivileged user namespaces there are no
//     walls: the tab runs under Landlock alone (writes limited by its
//     rules, /dev/pts allowed whole, path sockets reachable, nested
//     sandboxes failing), and its first line and `phantom status` say so.
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
// dropped. The walls' writable binds follow the same rules.
//
// # Why a launcher
//
// landlock_restrict_self confines the calling thread and what it executes
// afterwards, and needs no_new_privs (or CAP_SYS_ADMIN), which stays set
// across execve: setuid programs such as sudo cannot gain privileges in a
// sandboxed tab. terminald must not confine itself, so it starts the tab's
// program through the phantom binary itself (Rules.Argv), from the command
// line alone, so that any daemon can do the same with plain os/exec:
//
//	phantom +sandbox [--isolate --tmp=DIR --hide=DIR… --keep=PATH… --allow=SOCK… --scan=DIR…] --write=DIR… --write-file=FILE… --device=DEV… --connect=SOCK… -- PROGRAM ARG…
//
// Without --isolate the launcher (Exec) applies the rules on one locked OS
// thread and execs PROGRAM from that thread, so the tab's leader is the
// very process terminald started. With --isolate (Run) that process stays
// as the tab's leader and monitor: it starts its second stage in the new
// namespaces (a child: a process cannot enter a new user namespace and
// mount in it while other threads run, and the Go runtime always has some),
// which builds the walls and execs PROGRAM. The monitor gives the program
// a process group of its own and the terminal's foreground (job control,
// Ctrl-C and window-size changes are the program's), passes on the
// signals sent to the leader (hang-up, termination), kills the program if
// it dies itself, and exits as the program did. The program and all it
// starts stay descendants of the holder.
//
// # Older kernels
//
// Below ABI 6 (or without Landlock) a sandboxed tab still starts, but
// terminald writes Unavailable's one-line warning into it and reports it as
// not sandboxed; Describe says the same for `phantom status`. The launcher
// itself never downgrades: asked to sandbox on a kernel that cannot, or to
// build walls it cannot build, it fails.
package sandbox
