package authz

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/phantom-dev/phantom/authz/audit"
	"github.com/phantom-dev/phantom/authz/grants"
	"github.com/phantom-dev/phantom/authz/policy"
	"github.com/phantom-dev/phantom/authz/sheets"
	"github.com/phantom-dev/phantom/internal/daemon"
	"github.com/phantom-dev/phantom/internal/guard"
	"github.com/phantom-dev/phantom/internal/paths"
	authzv1 "github.com/phantom-dev/phantom/proto/phantom/authz/v1"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// SheetTimeoutEnv overrides how long a sheet waits for an answer (a Go
// duration, e.g. "30s"); keep it below the agents' tool-call timeouts.
const SheetTimeoutEnv = "PHANTOM_AUTHZ_SHEET_TIMEOUT"

// TurnAwayEnv overrides how long a refused caller is turned away without a
// new sheet (a Go duration, e.g. "2s"; default 60 s). Tests shorten it.
const TurnAwayEnv = "PHANTOM_AUTHZ_TURNAWAY"

// AuditSizesEnv scales the audit log and its budgets down, for tests
// that flood it: "MAXSIZE,PERCALLER,ALL,EVERY[,ACTPERCALLER,ACTALL]" — the
// size in bytes at which the log is rotated, the budget's bytes an hour
// per caller and for all callers, how often a summary is written (a Go
// duration), and the act budget's bytes an hour. Unset, the defaults
// hold (audit.DefaultMaxSize, DefaultBudget, DefaultActBudget).
const AuditSizesEnv = "PHANTOM_AUTHZ_AUDIT_SIZES"

// auditSizes reads AuditSizesEnv.
func auditSizes() (o audit.Options, b, acts Budget, err error) {
	v := os.Getenv(AuditSizesEnv)
	if v == "" {
		return audit.Options{}, DefaultBudget, DefaultActBudget, nil
	}
	bad := fmt.Errorf("%s=%q: want MAXSIZE,PERCALLER,ALL,EVERY[,ACTPERCALLER,ACTALL] such as 262144,16384,65536,2s", AuditSizesEnv, v)
	parts := strings.Split(v, ",")
	if len(parts) != 4 && len(parts) != 6 {
		return o, b, acts, bad
	}
	every, err := time.ParseDuration(parts[3])
	if err != nil || every <= 0 {
		return o, b, acts, bad
	}
	parts = slices.Delete(parts, 3, 4)
	n := []int64{0, 0, 0, DefaultActBudget.PerCaller, DefaultActBudget.All}
	for i, p := range parts {
		x, err := strconv.ParseInt(p, 10, 64)
		if err != nil || x <= 0 {
			return o, b, acts, bad
		}
		n[i] = x
	}
	return audit.Options{MaxSize: n[0]}, Budget{PerCaller: n[1], All: n[2], SummaryEvery: every},
		Budget{PerCaller: n[3], All: n[4], SummaryEvery: DefaultActBudget.SummaryEvery}, nil
}

// Run serves authz on addr until ctx is done. It learns about tabs from
// terminald (PHANTOM_TERMINALD_ADDR, else its socket in the runtime
// directory) and keeps the standing grants in the state directory.
func Run(ctx context.Context, addr string, layout paths.Layout, logger *slog.Logger) error {
	timeout := sheets.DefaultTimeout
	if v := os.Getenv(SheetTimeoutEnv); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return fmt.Errorf("%s=%q: want a positive duration such as 50s", SheetTimeoutEnv, v)
		}
		timeout = d
	}
	turnAway := sheets.DefaultTurnAway
	if v := os.Getenv(TurnAwayEnv); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return fmt.Errorf("%s=%q: want a positive duration such as 60s", TurnAwayEnv, v)
		}
		turnAway = d
	}
	logOptions, budget, acts, err := auditSizes()
	if err != nil {
		return err
	}
	logOptions.Logger = logger
	cc, err := daemon.Dial(layout.DaemonAddr("terminald"))
	if err != nil {
		return err
	}
	defer cc.Close()
	// The state directory is made if missing, but never re-moded: a
	// folder someone else could write is refused by the grants store
	// (StrictModes), not silently fixed after the fact.
	if err := os.MkdirAll(layout.State, 0o700); err != nil {
		return fmt.Errorf("create the state directory %s: %w", layout.State, err)
	}
	log := audit.Open(filepath.Join(layout.State, audit.FileName), logOptions)
	defer log.Close()
	log.Record(audit.Entry{Event: audit.AuthzStarted})
	store := grants.Open(filepath.Join(layout.State, grants.FileName), nil)
	if err := store.Err(); err != nil {
		logger.Error("grants file unusable: every request that needs a grant is refused", "err", err)
		log.Record(audit.Entry{Event: audit.GrantsFileRefused, Reason: err.Error()})
	}
	svc := NewService(Options{
		Policy:    policy.New(terminals{terminalv1.NewTerminalServiceClient(cc)}, nil),
		Grants:    store,
		Sheets:    sheets.New(sheets.Options{Timeout: timeout, TurnAway: turnAway}),
		MayAnswer: HumanGate(os.Getenv(TCPAnswersEnv) == "1"),
		Logger:    logger,
		Audit:     log,
		Budget:    budget,
		ActBudget: acts,
	})
	// Before the log closes: the last summary, also of what the calls the
	// server drained recorded.
	defer func() { svc.Close(); svc.writeSummary(true) }()
	g, err := guard.ForInstance(layout, authzv1.File_phantom_authz_v1_authz_proto, guard.Options{
		Open:   insideOpen,
		Refuse: insideRefusals,
	})
	if err != nil {
		return err
	}
	defer g.Close()
	srv, err := daemon.New("authz", logger, g.ServerOptions()...)
	if err != nil {
		return err
	}
	authzv1.RegisterAuthzServiceServer(srv.GRPC, svc)
	lis, err := daemon.Listen(addr)
	if err != nil {
		return err
	}
	// Refuse the waiting calls and end the watch streams before the
	// server drains, so that the graceful stop does not wait for them.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { <-ctx.Done(); svc.Close() }()
	go store.Watch(ctx, logger)
	return srv.Serve(ctx, lis)
}
