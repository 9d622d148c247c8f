package grants

import (
	"context"
	"log/slog"

	"github.com/phantom-dev/phantom/internal/filewatch"
)

// Watch follows the grants file until ctx ends, so that a change made by
// hand — an edit, a replacement by an editor, a removal, a chmod — is read
// (and reported through Observe) as soon as it happens, not at the next
// request. Without inotify it still checks every few seconds; every
// request checks anyway. On the same timer it retries a write that failed
// (see Flush), and logs once when the file is still not updated.
func (s *Store) Watch(ctx context.Context, logger *slog.Logger) {
	lastFlushErr := ""
	filewatch.Follow(ctx, filewatch.Spec{
		Path:    s.path,
		What:    "the grants file",
		Changed: s.Refresh,
		Tick: func() {
			err := s.Flush()
			if msg := errText(err); msg != lastFlushErr {
				if err != nil {
					logger.Error("grants file still not updated: a revocation holds in memory only", "path", s.path, "err", err)
				}
				lastFlushErr = msg
			}
		},
		Logger: logger,
	})
}
