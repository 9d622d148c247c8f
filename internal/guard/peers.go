package guard

import (
	"slices"
	"strings"

	"github.com/phantom-dev/phantom/internal/daemon"
	authzv1 "github.com/phantom-dev/phantom/proto/phantom/authz/v1"
	editorv1 "github.com/phantom-dev/phantom/proto/phantom/editor/v1"
	gitv1 "github.com/phantom-dev/phantom/proto/phantom/git/v1"
	lspv1 "github.com/phantom-dev/phantom/proto/phantom/lsp/v1"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// Service prefixes of full method names: a whole service is one method
// family.
var (
	terminalService = "/" + terminalv1.TerminalService_ServiceDesc.ServiceName + "/"
	gitService      = "/" + gitv1.GitService_ServiceDesc.ServiceName + "/"
	editorService   = "/" + editorv1.EditorService_ServiceDesc.ServiceName + "/"
	lspService      = "/" + lspv1.LanguageServerService_ServiceDesc.ServiceName + "/"
)

// mayCall says, per certificate identity, which methods a peer that
// came over TCP with mutual TLS may call: a whole service when the entry
// ends in "/", else one method. It is the call graph of the daemons and
// nothing more, so that a stolen certificate of one daemon reaches only
// what that daemon reaches.
//
//   - The gateway makes every agent's tool call, so it reaches every
//     daemon that serves tools, and asks authz to decide them (Authorize,
//     EndConnection, ListPolicy) — but may not answer sheets, which would
//     let the agents' side answer for the human.
//   - terminald and the other daemons' guards ask authz; terminald also
//     shows sheets in attach, relays the human's answers, lists grants
//     and relays revocations for attach's grants view, and reports to
//     the audit log what agents' focus_terminal did (RecordEvent).
//   - authz, gitd, editord and lspd read terminald's tabs to compute reach
//     and place callers; gitd and editord open tabs (a worktree's, the
//     editor's).
//   - The human's CLI answers permission sheets, and nothing else: the
//     human works with tabs through the gateway's tools or attach on the
//     machine itself.
//
// Health and reflection are open to every certificate of our CA
// (alwaysOpen), for health probes and grpcurl.
var mayCall = map[string][]string{
	"gateway": {terminalService, gitService, editorService, lspService,
		authzv1.AuthzService_Authorize_FullMethodName,
		authzv1.AuthzService_EndConnection_FullMethodName,
		authzv1.AuthzService_ListPolicy_FullMethodName,
	},
	// terminald relays the answers the human gives in attach and the
	// revocations of its grants view (which lists the grants), and
	// reports what agents' focus_terminal did to the human's clients.
	// It cannot add a grant but by relaying an answer.
	"terminald": append(guardToAuthz,
		authzv1.AuthzService_WatchSheets_FullMethodName,
		authzv1.AuthzService_AnswerSheet_FullMethodName,
		authzv1.AuthzService_ListGrants_FullMethodName,
		authzv1.AuthzService_RevokeGrant_FullMethodName,
		authzv1.AuthzService_RecordEvent_FullMethodName,
	),
	"authz": {
		terminalv1.TerminalService_ListTerminals_FullMethodName,
		terminalv1.TerminalService_LocateProcess_FullMethodName,
	},
	"gitd": append(guardToAuthz,
		terminalv1.TerminalService_ListTerminals_FullMethodName,
		terminalv1.TerminalService_CreateTerminal_FullMethodName,
		terminalv1.TerminalService_CreateGroup_FullMethodName,
		terminalv1.TerminalService_LocateProcess_FullMethodName,
		terminalv1.TerminalService_DescribeSandbox_FullMethodName,
	),
	"editord": append(guardToAuthz,
		terminalv1.TerminalService_ListTerminals_FullMethodName,
		terminalv1.TerminalService_CreateTerminal_FullMethodName,
		terminalv1.TerminalService_LocateProcess_FullMethodName,
		terminalv1.TerminalService_DescribeSandbox_FullMethodName,
	),
	"lspd": append(guardToAuthz,
		terminalv1.TerminalService_LocateProcess_FullMethodName,
		terminalv1.TerminalService_DescribeSandbox_FullMethodName,
	),
	daemon.HumanIdentity: {
		authzv1.AuthzService_ListSheets_FullMethodName,
		authzv1.AuthzService_WatchSheets_FullMethodName,
		authzv1.AuthzService_AnswerSheet_FullMethodName,
	},
}

// guardToAuthz is what a daemon's guard asks authz (guard.authorize).
var guardToAuthz = []string{
	authzv1.AuthzService_Authorize_FullMethodName,
	authzv1.AuthzService_ListPolicy_FullMethodName,
}

// peerMayCall reports whether the holder of certificate identity name may
// call method.
func peerMayCall(name, method string) bool {
	for _, p := range alwaysOpen {
		if strings.HasPrefix(method, p) {
			return true
		}
	}
	return slices.ContainsFunc(mayCall[name], func(m string) bool {
		if strings.HasSuffix(m, "/") {
			return strings.HasPrefix(method, m)
		}
		return m == method
	})
}

// actsForAgents are the identities whose "for an agent" metadata counts
// over TCP: the gateway, which serves agents, and gitd and editord, which
// open tabs for them (a worktree's, the editor's) and pass the agent on
// so that the tab gets the agent's sandbox and marks. Saying a call is an
// agent's only ever narrows what a caller outside Phantom may do.
var actsForAgents = []string{"gateway", "gitd", "editord"}
