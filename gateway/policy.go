package gateway

import (
	"context"
	"sync"
	"time"

	"github.com/phantom-dev/phantom/internal/toolreg"
	authzv1 "github.com/phantom-dev/phantom/proto/phantom/authz/v1"
)

// policyRetry is how soon a failed fetch of authz's policy is tried again.
const policyRetry = time.Second

// freeTools remembers which tools authz's policy says need no capability,
// so their calls skip the Authorize round trip. The decision stays
// authz's: the set comes from its ListPolicy, and until it has been fetched
// every call is put to Authorize.
type freeTools struct {
	mu      sync.Mutex
	free    map[string]bool // nil until fetched
	retryAt time.Time
}

// isFree reports whether tool needs no capability, fetching the policy
// the first time (and again after a failure, at most once a second).
func (s *Server) isFree(ctx context.Context, tool string) bool {
	f := &s.policy
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.free == nil && time.Now().After(f.retryAt) {
		f.free = s.fetchFree(ctx)
		if f.free == nil {
			f.retryAt = time.Now().Add(policyRetry)
		}
	}
	return f.free[tool]
}

func (s *Server) fetchFree(ctx context.Context) map[string]bool {
	b, err := s.backends.get(authzDaemon)
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	resp, err := authzv1.NewAuthzServiceClient(b.cc).ListPolicy(ctx, &authzv1.ListPolicyRequest{})
	if err != nil {
		return nil
	}
	free := map[string]bool{}
	for _, t := range resp.GetTools() {
		if toolreg.Free(t.GetCapability()) {
			free[t.GetTool()] = true
		}
	}
	return free
}
