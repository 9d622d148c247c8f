package config

import (
	"fmt"
	"strings"
)

// Attention says how Phantom calls the human: what a program's bell does,
// and how a new permission sheet, an agent that waits for input and an
// agent that finished ring the attached clients and the desktop. Parse
// fills in the defaults (DefaultAttention); the methods read an empty
// field (a Config built by hand) as its default too. Without "attention"
// a bell does what tmux's bell-action any does, and sheets and agents
// ring.
type Attention struct {
	// Bell is what a BEL written by a tab's program does: "on" (the
	// default) marks the tab on the status line while it is not shown and
	// rings the client's terminal; "off" drops it.
	Bell string `json:"bell,omitempty"`
	// Sheet, Waiting and Finished say how a new permission sheet, an agent
	// that waits for input and an agent that finished reach the attached
	// clients: "bell" (a BEL), "notify" (a desktop notification escape,
	// OSC 9 or OSC 777, where the client's terminal announced one), "both"
	// (the default) or "off".
	Sheet    string `json:"sheet,omitempty"`
	Waiting  string `json:"waiting,omitempty"`
	Finished string `json:"finished,omitempty"`
	// Desktop, when "on", makes terminald also send each of those events
	// that is not "off" to the freedesktop notification service on the
	// session bus of `phantom up`, attached or not. "off" (the default)
	// leaves it to the terminal's notifications.
	Desktop string `json:"desktop,omitempty"`
}

// DefaultAttention is the attention settings with every default filled
// in, as config show prints them.
func DefaultAttention() Attention {
	return Attention{Bell: "on", Sheet: "both", Waiting: "both", Finished: "both", Desktop: "off"}
}

// withDefaults fills in the fields left out.
func (a Attention) withDefaults() Attention {
	d := DefaultAttention()
	for _, f := range []struct{ v, def *string }{
		{&a.Bell, &d.Bell}, {&a.Sheet, &d.Sheet}, {&a.Waiting, &d.Waiting}, {&a.Finished, &d.Finished}, {&a.Desktop, &d.Desktop},
	} {
		if *f.v == "" {
			*f.v = *f.def
		}
	}
	return a
}

// Ring is how an attention event reaches the attached clients.
type Ring struct {
	// Bell is a BEL to the client's terminal.
	Bell bool
	// Notify is a notification escape, where the terminal announced one.
	Notify bool
}

// Off reports whether the event reaches no client.
func (r Ring) Off() bool { return !r.Bell && !r.Notify }

// The values of the attention settings.
var (
	bellValues = []string{"on", "off"}
	ringValues = []string{"bell", "notify", "both", "off"}
)

// BellOn reports whether a program's bell marks its tab and rings.
func (a Attention) BellOn() bool { return a.Bell != "off" }

// DesktopOn reports whether terminald sends desktop notifications.
func (a Attention) DesktopOn() bool { return a.Desktop == "on" }

// SheetRing, WaitingRing and FinishedRing are how each event rings.
func (a Attention) SheetRing() Ring    { return ringOf(a.Sheet) }
func (a Attention) WaitingRing() Ring  { return ringOf(a.Waiting) }
func (a Attention) FinishedRing() Ring { return ringOf(a.Finished) }

func ringOf(v string) Ring {
	switch v {
	case "bell":
		return Ring{Bell: true}
	case "notify":
		return Ring{Notify: true}
	case "off":
		return Ring{}
	}
	return Ring{Bell: true, Notify: true}
}

// check validates the attention settings, naming the field.
func (a Attention) check() error {
	for _, f := range []struct {
		name, v string
		values  []string
	}{
		{"bell", a.Bell, bellValues},
		{"sheet", a.Sheet, ringValues},
		{"waiting", a.Waiting, ringValues},
		{"finished", a.Finished, ringValues},
		{"desktop", a.Desktop, bellValues},
	} {
		if f.v == "" {
			continue
		}
		ok := false
		for _, v := range f.values {
			ok = ok || v == f.v
		}
		if !ok {
			return fmt.Errorf("attention.%s must be %s, got %q", f.name, orList(f.values), f.v)
		}
	}
	return nil
}

// orList is `"a", "b" or "c"`.
func orList(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}
