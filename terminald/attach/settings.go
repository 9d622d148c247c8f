package attach

import (
	"os"
	"sync"
	"time"

	"github.com/phantom-dev/phantom/internal/config"
)

// noticeTime is how long a settings notice (config.json invalid, a change
// that waits for a restart) stays on the status line; longer than a
// message, since the user did not cause it from here.
const noticeTime = 10 * time.Second

// Settings are the parts of config.json a session applies live: the
// prefix, the key bindings, the status line and 24-bit colour.
type Settings struct {
	// Prefix is the key that starts a command.
	Prefix byte
	// Bindings map the keys typed after the prefix to commands.
	Bindings config.Bindings
	// Left and Right are the status line's formats.
	Left, Right config.Format
	// BG, FG, ActiveBG and ActiveFG are the status line's colours;
	// unset ones keep the default bar.
	BG, FG, ActiveBG, ActiveFG config.Colour
	// RepeatTime is how long a repeatable command's keys run without the
	// prefix (config.json's repeat_time); 0: never.
	RepeatTime time.Duration
	// TrueColor is config.json's "truecolor": config.TrueColorAuto, On
	// or Off ("" is auto).
	TrueColor string
}

// NewSettings takes the live settings from c, which config.Load has
// checked; what does not parse (a Config built by hand) keeps its default.
func NewSettings(c config.Config) *Settings {
	s := &Settings{Bindings: c.Bindings(), RepeatTime: time.Duration(c.Repeat()) * time.Millisecond, TrueColor: c.TrueColor}
	var err error
	if s.Prefix, err = config.ParsePrefix(c.Prefix); err != nil {
		s.Prefix = DefaultPrefix
	}
	right := c.Status.Right
	if right == "" {
		right = config.DefaultStatusRight
	}
	s.Left, _ = config.ParseFormat(c.Status.Left)
	s.Right, _ = config.ParseFormat(right)
	st := c.Status.Style
	s.BG, _ = config.ParseColour(st.BG)
	s.FG, _ = config.ParseColour(st.FG)
	s.ActiveBG, _ = config.ParseColour(st.ActiveBG)
	s.ActiveFG, _ = config.ParseColour(st.ActiveFG)
	return s
}

// Notice is what sessions show on their status line about a settings
// change.
type Notice struct {
	// Text is the notice; "" for none.
	Text string
	// Sticky notices (config.json refused, a change waiting for a
	// restart) hold until the next change: a session that attaches
	// meanwhile shows them too. Others (what a reload applied) are shown
	// only by the sessions attached when it happened.
	Sticky bool
	at     time.Time // when Set
}

// Live holds the settings sessions use now, and tells them when they
// change (terminald reloads config.json).
type Live struct {
	mu      sync.Mutex
	cur     *Settings
	notice  Notice
	changed chan struct{}
}

// NewLive starts with s and no notice.
func NewLive(s *Settings) *Live {
	return &Live{cur: s, changed: make(chan struct{})}
}

// Set replaces the settings and the notice, and tells every session.
func (l *Live) Set(s *Settings, n Notice) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n.at = time.Now()
	l.cur, l.notice = s, n
	close(l.changed)
	l.changed = make(chan struct{})
}

// Current returns the settings and the notice.
func (l *Live) Current() (*Settings, Notice) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cur, l.notice
}

// Changed returns a channel closed at the next Set. Take it before
// calling Current, so that no change is missed.
func (l *Live) Changed() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.changed
}

// defaultSettings serve sessions without Live (tests, embedders).
var defaultSettings = NewSettings(config.Config{})

// settings are the session's settings now.
func (s *session) settings() *Settings {
	if s.o.Live == nil {
		return defaultSettings
	}
	cur, _ := s.o.Live.Current()
	return cur
}

// liveChanged is the channel that tells of the next settings change; nil
// (never ready) without Live.
func (s *session) liveChanged() <-chan struct{} {
	if s.o.Live == nil {
		return nil
	}
	return s.o.Live.Changed()
}

// applyLive takes the current settings: the prefix at once, the status
// line and boxes at the next frame (drawn whole), and the notice, if it is
// for this session, on the status line.
func (s *session) applyLive() {
	s.applyTrueColor()
	if s.o.Live == nil {
		return
	}
	cur, n := s.o.Live.Current()
	s.o.Prefix = cur.Prefix
	s.needFull = true
	switch {
	case n.Text == "":
	case n.Sticky:
		s.message, s.msgUntil = n.Text, time.Now().Add(noticeTime)
	case time.Since(n.at) < noticeTime:
		s.message, s.msgUntil = n.Text, n.at.Add(noticeTime)
	}
}

// statusVar is the value of a status line format variable.
func (s *session) statusVar(name string) string {
	t, _ := s.focusedTab()
	switch name {
	case "window":
		return s.winName
	case "window_id":
		return s.winID
	case "tab":
		if t.Title != "" {
			return t.Title
		}
		return t.ID
	case "tab_id":
		return t.ID
	case "dir":
		return t.Directory
	case "host":
		return hostname()
	}
	return ""
}

// hostname is the machine's name, read once: the status line is drawn
// often, and the name does not change under a running terminald in
// practice.
var hostname = sync.OnceValue(func() string {
	h, _ := os.Hostname()
	return h
})

// styleStatus fills the configured parts of the status line into si.
func (s *session) styleStatus(si *StatusInfo) {
	st := s.settings()
	si.Style = st
	si.Left = st.Left.Expand(s.statusVar)
	si.RightText = st.Right.Expand(s.statusVar)
}
