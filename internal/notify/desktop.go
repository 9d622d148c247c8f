// Package notify sends desktop notifications through the freedesktop
// notification service (org.freedesktop.Notifications.Notify on the
// session bus), as notify-send does. terminald uses it for what calls the
// human (terminald/attach's Attention) when config.json's
// attention.desktop is on: it runs with the environment of `phantom up`,
// so it reaches the desktop session Phantom was started from, attached
// clients or not.
package notify

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/godbus/dbus/v5"
)

// The freedesktop notification service's names.
const (
	ServiceName = "org.freedesktop.Notifications"
	ObjectPath  = "/org/freedesktop/Notifications"
	NotifyCall  = ServiceName + ".Notify"
)

// AppName is the application the notifications name.
const AppName = "Phantom"

// ErrNoBus is returned when there is no session bus to send to
// (DBUS_SESSION_BUS_ADDRESS is unset) or nobody owns the service's name.
var ErrNoBus = errors.New("no desktop notification service")

// Desktop sends notifications to the session bus of Address; it connects
// at the first notification and again after the connection broke.
type Desktop struct {
	// Address is the session bus's address; BusAddress() by default.
	Address string

	mu   sync.Mutex
	conn *dbus.Conn
}

// BusAddress is the session bus's address from the environment; "" when
// there is none. Phantom does not start a bus (no autolaunch): without one
// there is no desktop to notify.
func BusAddress() string { return os.Getenv("DBUS_SESSION_BUS_ADDRESS") }

// Notify shows title and body as one notification. It returns ErrNoBus
// (wrapped) when there is no service, else the bus's error.
func (d *Desktop) Notify(ctx context.Context, title, body string) error {
	conn, err := d.connect()
	if err != nil {
		return err
	}
	var owned bool
	if err := conn.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.NameHasOwner", 0, ServiceName).Store(&owned); err != nil {
		d.drop(conn)
		return fmt.Errorf("desktop notification: ask the session bus for %s: %w", ServiceName, err)
	}
	if !owned {
		return fmt.Errorf("desktop notification: nobody owns %s on the session bus: %w", ServiceName, ErrNoBus)
	}
	obj := conn.Object(ServiceName, ObjectPath)
	call := obj.CallWithContext(ctx, NotifyCall, 0,
		AppName, uint32(0), "", title, Markup(body), []string{},
		map[string]dbus.Variant{"urgency": dbus.MakeVariant(byte(1))}, int32(-1))
	if call.Err != nil {
		return fmt.Errorf("desktop notification: %s: %w", NotifyCall, call.Err)
	}
	return nil
}

// connect returns the connection, dialling it when there is none.
func (d *Desktop) connect() (*dbus.Conn, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.conn != nil && d.conn.Connected() {
		return d.conn, nil
	}
	addr := d.Address
	if addr == "" {
		addr = BusAddress()
	}
	if addr == "" {
		return nil, fmt.Errorf("desktop notification: DBUS_SESSION_BUS_ADDRESS is not set: %w", ErrNoBus)
	}
	conn, err := dbus.Connect(addr)
	if err != nil {
		return nil, fmt.Errorf("desktop notification: connect to the session bus at %s: %w", addr, err)
	}
	d.conn = conn
	return conn, nil
}

// drop forgets a connection that failed, so the next call dials again.
func (d *Desktop) drop(c *dbus.Conn) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.conn == c {
		d.conn.Close()
		d.conn = nil
	}
}

// Close closes the connection, if any.
func (d *Desktop) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.conn == nil {
		return nil
	}
	err := d.conn.Close()
	d.conn = nil
	return err
}

// Markup escapes text for a notification body, which servers may read as
// their small markup language (<b>, <a href=…>): agent text must show as
// written, never as a link or formatting.
func Markup(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
