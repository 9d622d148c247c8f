package gateway

import (
	"context"
	"os"
	"path/filepath"

	"github.com/phantom-dev/phantom/internal/guard"
	"github.com/phantom-dev/phantom/internal/lineage"
	"github.com/phantom-dev/phantom/internal/procfs"
)

// newVerifier checks hellos for a gateway of opts: each peer is placed in
// the process tree of the instance whose terminald is opts.Addr("terminald"),
// and terminald, over bs, names its tab.
func newVerifier(opts Options, creds credsReader, bs *backends) verifier {
	v := verifier{tabDir: opts.TabStateDir, uid: os.Getuid(), creds: creds, locate: opts.locate, program: opts.program}
	if v.locate == nil {
		v.locate = instanceLocator(opts.Addr("terminald"), bs)
		v.vouchee = instanceVouchee(opts.Addr("terminald"), bs)
	}
	if v.program == nil {
		v.program = clientProgram()
	}
	return v
}

// clientProgram names the program behind each connection: the MCP client
// that started Phantom's bridge (the gateway's own executable run as
// `+mcp-server`), or the peer itself when it is anything else — a copy of
// the bridge, a script speaking the socket. See lineage.ClientProgram.
func clientProgram() func(pid int) string {
	self, err := os.Executable()
	if err == nil {
		if real, err := filepath.EvalSymlinks(self); err == nil {
			self = real
		}
	} else {
		self = ""
	}
	return func(pid int) string { return lineage.ClientProgram(procfs.Default, pid, self) }
}

// instanceLocator places processes in the tree of the instance whose
// terminald serves addr. Without terminald every placement fails, and
// every hello is refused: only terminald knows which process is which
// tab's.
func instanceLocator(addr string, bs *backends) locator {
	tree := lineage.Tree{FS: procfs.Default, IsTerminald: lineage.ByCommandLine(addr, addr)}
	return func(pid int) (guard.Caller, error) {
		b, err := bs.get("terminald")
		if err != nil {
			return guard.Caller{}, err
		}
		return guard.Locate(context.Background(), pid, tree.Locate, guard.TabsOn(b.cc).TabOf)
	}
}
