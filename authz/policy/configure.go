package policy

import (
	"strings"
	"sync"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/phantom-dev/phantom/terminald/sandbox"
)

// configureLanguageServer words configure_language_server's sheet so that
// what the human approves is all the agent gets (invariant 4): which
// server (the one of the workspace named, not the language's others),
// until when (until Phantom stops; nothing is saved), everything that
// decides what runs (command, args, env, initialization options,
// settings — pylsp's settings alone can name executables), and where it
// runs: in the caller tab's sandbox, in a read-only sandbox for a caller
// without one, or, where the kernel cannot sandbox, as the human. lspd
// (lspd/servers.Registry.Configure and lspd's confiner) does exactly
// that; a configuration for every workspace, saved, is not an agent's to
// make.
var configureLanguageServer = special{
	subject: []protoreflect.Name{"server_id", "language", "command", "args", "env", "initialization_options", "settings"},
	say: func(e *evaluation, target string, v []protoreflect.Value, why string) string {
		fields := e.tool.Subject
		var what []string
		for i, f := range fields {
			if e.req.Has(f) {
				what = append(what, string(f.Name())+" "+showValue(f, v[i]))
			}
		}
		if len(what) == 0 {
			what = append(what, "nothing changed")
		}
		return "configure " + strings.Join(what, ", ") + " for the language server of " + target +
			" only (not the language's other workspaces, not other tabs' servers), until Phantom stops (not saved); it runs " +
			configureWhere(e.self) + "; " + why
	},
}

// configureWhere says where a configured language server of a caller in
// tab self (nil: in no tab) runs, as lspd's confiner decides it.
func configureWhere(self *TabInfo) string {
	switch {
	case !kernelSandboxes():
		return "as you, outside any sandbox (" + sandbox.Unavailable(sandbox.ABI()) + ")"
	case self != nil && self.Sandboxed:
		return "in the sandbox of the caller's tab " + printable(self.ID) + " (it writes only where that tab may)"
	}
	return "in a read-only sandbox (it writes only the temporary directories)"
}

// kernelSandboxes reports whether this kernel can sandbox (Landlock ABI
// 6): authz runs on the kernel lspd runs on.
var kernelSandboxes = sync.OnceValue(func() bool { return sandbox.ABI() >= sandbox.MinABI })
