package attach

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/phantom-dev/phantom/terminald/workspace"
)

// Notifier sends desktop notifications (internal/notify's Desktop).
type Notifier interface {
	Notify(ctx context.Context, title, body string) error
}

// Attention finds the calls of all tabs once — a new sheet on screen, an
// agent waiting for input, an agent that finished — and hands each to
// every subscribed session and, when config.json's attention.desktop is
// on, to the desktop Notifier. terminald runs one, with the environment
// of `phantom up`, so desktop notifications come also when no client is
// attached.
type Attention struct {
	ws      *workspace.Workspace
	sheets  Sheets
	desktop Notifier
	settle  time.Duration

	mu   sync.Mutex
	subs map[chan Call]struct{}
	// desk queues calls for the desktop sender, so that a slow bus never
	// holds the watch up; deskLimit keeps a flood of calls (an agent that
	// opens and ends tabs in a loop) off the desktop, as sessions do.
	desk      chan Call
	deskLimit bucket
}

// callBuffer is how many calls a session may fall behind before more are
// dropped for it.
const callBuffer = 16

// NewAttention watches ws's tabs and sheets (nil: none) for calls;
// desktop, when non-nil, is where desktop notifications go.
func NewAttention(ws *workspace.Workspace, sheets Sheets, desktop Notifier) *Attention {
	return &Attention{ws: ws, sheets: sheets, desktop: desktop, settle: WaitingSettle,
		subs: map[chan Call]struct{}{}, desk: make(chan Call, callBuffer)}
}

// subscribe returns a channel of the calls from now on.
func (a *Attention) subscribe() (<-chan Call, func()) {
	ch := make(chan Call, callBuffer)
	a.mu.Lock()
	a.subs[ch] = struct{}{}
	a.mu.Unlock()
	return ch, func() {
		a.mu.Lock()
		delete(a.subs, ch)
		a.mu.Unlock()
	}
}

// emit hands c to the sessions and the desktop, as config.json says now.
func (a *Attention) emit(c Call) {
	cfg := a.ws.Config().Attention
	c.Ring = ringFor(c.Kind, cfg)
	if c.Ring.Off() {
		return
	}
	title, body := notifyText(c.Title, maxNotifyTitle, true), notifyText(c.Body, maxNotifyBody, false)
	c.Title, c.Body = "", ""
	if c.Ring.Notify {
		c.Title, c.Body = title, body
	}
	a.mu.Lock()
	for ch := range a.subs {
		select {
		case ch <- c:
		default:
		}
	}
	desktop := cfg.DesktopOn() && a.desktop != nil && a.deskLimit.allow(time.Now(), callBurst, callEvery)
	a.mu.Unlock()
	if desktop {
		c.Title, c.Body = title, body
		select {
		case a.desk <- c:
		default:
		}
	}
}

// Run watches until ctx ends.
func (a *Attention) Run(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Add(1)
	go func() {
		defer wg.Done()
		a.sendDesktop(ctx)
	}()
	w := newWatcher(a.settle, func(program string) bool {
		cfg := a.ws.Config() // as config.json says now
		return cfg.IsAgentProgram(program)
	})
	watch := a.ws.Watch()
	defer func() { watch.Stop() }()
	now := time.Now()
	for _, t := range a.ws.List() {
		w.observe(t, now) // what was before is not news
	}
	lastSheet := ""
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		var sheetsCh <-chan struct{}
		if a.sheets != nil {
			sheetsCh = a.sheets.Changed()
			if cur, _ := a.sheets.Current(); cur != nil && cur.ID != lastSheet {
				lastSheet = cur.ID
				a.emit(sheetCall(cur))
			}
		}
		for _, c := range w.due(time.Now(), a.lastOutput) {
			a.emit(c)
		}
		timer.Reset(w.next(time.Now()))
		select {
		case <-ctx.Done():
			return
		case <-sheetsCh:
		case <-timer.C:
		case ev, ok := <-watch.Events():
			if !ok {
				if watch.Err() == nil {
					return // terminald stops
				}
				// Fell behind: start over, with what changed meanwhile.
				watch = a.ws.Watch()
				for _, t := range a.ws.List() {
					for _, c := range w.observe(t, time.Now()) {
						a.emit(c)
					}
				}
				continue
			}
			if ev.Kind == workspace.EventClosed {
				w.forget(ev.Terminal.ID)
				continue
			}
			for _, c := range w.observe(ev.Terminal, time.Now()) {
				a.emit(c)
			}
		}
	}
}

// lastOutput is when tab id last drew output; the zero time if unknown.
func (a *Attention) lastOutput(id string) time.Time {
	t, _ := a.ws.LastOutput(id)
	return t
}

// sendDesktop sends the queued desktop notifications until ctx ends.
func (a *Attention) sendDesktop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case c := <-a.desk:
			nctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			a.desktop.Notify(nctx, c.Title, c.Body) // best effort: the terminal rang anyway
			cancel()
		}
	}
}

// sheetCall is the call of a new sheet.
func sheetCall(sh *Sheet) Call {
	// Both names are the agent's: short, so that what it asks survives.
	who := notifyName(sh.Client)
	if who == "" {
		who = "an agent"
	}
	where := ""
	if title := notifyName(sh.TabTitle); title != "" {
		where = " in " + title
	}
	return Call{Kind: CallSheet, TabID: sh.TabID,
		Title: "Phantom: " + who + " asks permission",
		Body:  fmt.Sprintf("%s%s asks to %s (%s); prefix s answers", who, where, sh.Capability, sh.Tool)}
}
