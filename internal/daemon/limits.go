package daemon

import "google.golang.org/grpc"

// MaxMessageSize is the largest gRPC message a Phantom daemon or client
// sends or receives: 16 MiB, set on every server (New) and every client
// (Dial) rather than left to gRPC's defaults (4 MiB received, unbounded
// sent), so that both ends agree and the limit is a decision.
//
// Messages are bounded where they are made, well below it: a ReadOutput
// page holds at most 1 MiB of text (the proto's max_bytes; 2 MiB on the
// wire at worst, for a page of empty lines), attach input at most 1 MiB a
// message. Reads of any size page by cursor instead of growing a message.
// The margin is for replies that grow with the workspace (tabs,
// diagnostics, worktrees) and for attach's screen repaints, which are not
// chunked: a full repaint of a very large, richly coloured screen is the
// one message that could still approach it.
const MaxMessageSize = 16 << 20

// serverSizeOptions sets MaxMessageSize on a server.
func serverSizeOptions() []grpc.ServerOption {
	return []grpc.ServerOption{grpc.MaxRecvMsgSize(MaxMessageSize), grpc.MaxSendMsgSize(MaxMessageSize)}
}

// clientSizeOptions sets MaxMessageSize on a client's every call.
func clientSizeOptions() grpc.DialOption {
	return grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxMessageSize), grpc.MaxCallSendMsgSize(MaxMessageSize))
}
