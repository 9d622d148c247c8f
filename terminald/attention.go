package terminald

import (
	"context"

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
	desktop := &notify.Desktop{}
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
		desktop.Close()
	}
}
