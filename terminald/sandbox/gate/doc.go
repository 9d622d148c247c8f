// Package gate decides every connect(2) a sandboxed program makes, so that
// it reaches no Unix socket but the MCP socket, the sockets the human
// allowed by name, and the sockets its own processes listen on — on the
// kernels in use today, which cannot say so themselves (Landlock restricts
// path-socket connects only from ABI 9).
//
// # How
//
// The sandbox's last stage installs a seccomp filter (Install) that hands
// every connect to a supervisor outside the sandbox, the tab's monitor,
// through a seccomp user-notification listener (Serve). It also refuses
// creating Unix datagram sockets, with socket and socketpair alike (a
// datagram can be sent to a path socket with sendto or sendmsg, without
// any connect, and even from a connected or paired socket), and io_uring
// (whose connect bypasses seccomp).
//
// The supervisor never lets the kernel carry on with the sandbox's own
// request (SECCOMP_USER_NOTIF_FLAG_CONTINUE): the kernel would read the
// address again from the sandbox's memory, which another of its threads
// may have changed since the supervisor read it. Instead it performs
// every connect itself, from its copy of the address:
//
//   - a Unix socket: the path is resolved inside the sandbox's own root
//     (openat2 with RESOLVE_IN_ROOT on /proc/PID/root, no magic links), the
//     inode it names is checked against the policy, and the supervisor
//     connects a new socket of the same type to that very inode (through
//     /proc/self/fd/N) and puts it in place of the sandbox's descriptor
//     (SECCOMP_IOCTL_NOTIF_ADDFD). An abstract name is looked up among the
//     listening sockets. Whatever is refused gets EACCES, what Landlock
//     answers from ABI 9;
//   - any other family (TCP, UDP, netlink): the supervisor connects the
//     sandbox's own socket, through a duplicate of its descriptor
//     (pidfd_getfd), with the address it read. Network access stays open.
//
// A socket "of its own" is one that a process of the sandbox — a
// descendant of the monitor — holds: the listener is found by its inode
// (or abstract name) in the kernel's socket table (sock_diag), and the
// sandbox's processes' descriptors are searched for it.
//
// Because the supervisor connects, the server sees the supervisor as its
// peer. For the MCP socket, whose gateway identifies callers by their
// process, the supervisor first writes a vouch line naming the process
// that asked (peercred.Vouch); the gateway honours it only from a tab's
// genuine monitor, and only for that monitor's descendants.
//
// # What changes for programs
//
// A socket option set before connect (SO_PASSCRED, buffer sizes) does not
// carry over to the connected socket, and a Unix client socket bound
// before its connect loses that binding. Unix datagram sockets cannot be
// created, paired ones included (syslog(3) and sd_notify fall silent). A program that installs a
// seccomp listener of its own cannot (the kernel allows one per process
// tree). io_uring is refused; libuv and others fall back to plain calls.
package gate
