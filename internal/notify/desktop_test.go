package notify_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/internal/notify"
	"github.com/phantom-dev/phantom/internal/notify/notifytest"
)

// TestDesktopNotify sends a notification to a fake service on a private
// session bus and checks what arrived, markup escaped.
func TestDesktopNotify(t *testing.T) {
	svc := notifytest.Start(t, true)
	d := &notify.Desktop{Address: svc.Address}
	defer d.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := d.Notify(ctx, "Phantom: claude waits", `tab t1: <a href="x">hi</a> & bye`); err != nil {
		t.Fatalf("Notify: %v", err)
	}
	got := svc.Received()
	want := notifytest.Notification{App: notify.AppName, Summary: "Phantom: claude waits", Body: "tab t1: &lt;a href=\"x\"&gt;hi&lt;/a&gt; &amp; bye"}
	if len(got) != 1 || got[0] != want {
		t.Fatalf("received %+v, want [%+v]", got, want)
	}
}

// TestDesktopNoService checks the refusals: no bus address, and a bus
// where nobody owns the service's name.
func TestDesktopNoService(t *testing.T) {
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "")
	ctx := context.Background()
	tests := []struct {
		name string
		addr func(t *testing.T) string
	}{
		{"no bus", func(*testing.T) string { return "" }},
		{"nobody owns the name", func(t *testing.T) string { return notifytest.Start(t, false).Address }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &notify.Desktop{Address: tt.addr(t)}
			defer d.Close()
			if err := d.Notify(ctx, "t", "b"); !errors.Is(err, notify.ErrNoBus) {
				t.Fatalf("Notify = %v, want ErrNoBus", err)
			}
		})
	}
}
