package daemon

import (
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// TestMessageSizeLimits checks that a server from New and a client from
// Dial take messages past gRPC's default 4 MiB both ways, up to
// MaxMessageSize, and refuse larger ones plainly.
func TestMessageSizeLimits(t *testing.T) {
	s := serveFake(t)
	waitServing(t, s.health)
	tests := []struct {
		name string
		size int
		code codes.Code // of a Check naming a service of that size
	}{
		{name: "past the default", size: 6 << 20, code: codes.NotFound},
		{name: "just under the limit", size: MaxMessageSize - 1024, code: codes.NotFound},
		{name: "over the limit", size: MaxMessageSize + 1, code: codes.ResourceExhausted},
	}
	// Requests: the client sends them and the server receives them.
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.health.Check(callCtx(t), &healthpb.HealthCheckRequest{Service: strings.Repeat("s", tc.size)})
			if status.Code(err) != tc.code {
				t.Fatalf("Check of a %d-byte request = %v, want %v", tc.size, err, tc.code)
			}
		})
	}
	// Responses: the server sends them and the client receives them. List
	// answers with every service name the health server knows.
	for _, r := range []struct {
		size int
		code codes.Code
	}{{6 << 20, codes.OK}, {11 << 20, codes.ResourceExhausted}} {
		s.srv.Health.SetServingStatus(strings.Repeat(string(rune('a'+r.size%26)), r.size), healthpb.HealthCheckResponse_SERVING)
		_, err := s.health.List(callCtx(t), &healthpb.HealthListRequest{})
		if status.Code(err) != r.code {
			t.Fatalf("List with a %d-byte name added = %v, want %v", r.size, err, r.code)
		}
	}
}
