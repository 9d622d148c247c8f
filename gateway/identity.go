package gateway

import (
	"context"
	"os"

	"github.com/phantom-dev/phantom/internal/guard"
	"github.com/phantom-dev/phantom/internal/lineage"
	"github.com/phantom-dev/phantom/internal/procfs"
)

// newVerifier checks hellos for a gateway of opts: each peer is placed in
// the process tree of the instance whose terminald is opts.Addr("terminald"),
// and terminald, over bs, names its tab.
func newVerifier(opts Options, creds credsReader, bs *backends) verifier {
	v := verifier{tabDir: opts.TabStateDir, uid: os.Getuid(), creds: creds, locate: opts.locate}
	if v.locate == nil {
		v.locate = instanceLocator(opts.Addr("terminald"), bs)
		v.vouchee = instanceVouchee(opts.Addr("terminald"), bs)
	}
	return v
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
