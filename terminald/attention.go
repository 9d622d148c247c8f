package terminald

import (
	"context"
	"log/slog"
	"sync"

	"github.com/phantom-dev/phantom/internal/notify"
	"github.com/phantom-dev/phantom/terminald/attach"
)

// startAttention runs what calls the human (attach.Attention): new
// sheets, agents that wait for input or finished ring the attached
// clients, and — with config.json's attention.desktop on — the desktop.
// terminald sends the desktop notifications: it runs with the environment
// of `phantom up` (DBUS_SESSION_BUS_ADDRESS) and sees every sheet, clients
// attached or not. stop ends it and waits.
func (s *Service) startAttention(sheets attach.Sheets) (stop func()) {
	desktop := &loggedDesktop{d: &notify.Desktop{}, logger: s.logger}
	s.attention = attach.NewAttention(s.ws, sheets, desktop)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.attention.Run(ctx)
	}()
	return func() {
		cancel()
		<-done
		desktop.d.Close()
	}
}

// loggedDesktop logs why a desktop notification failed, once per cause:
// with attention.desktop on and no notification service, the log says so
// without repeating it for every sheet.
type loggedDesktop struct {
	d      *notify.Desktop
	logger *slog.Logger

	mu   sync.Mutex
	last string
}

// Notify sends, and logs a new cause of failure.
func (l *loggedDesktop) Notify(ctx context.Context, title, body string) error {
	err := l.d.Notify(ctx, title, body)
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case err == nil:
		l.last = ""
	case err.Error() != l.last:
		l.last = err.Error()
		l.logger.Warn("desktop notification not sent", "err", err)
	}
	return err
}
