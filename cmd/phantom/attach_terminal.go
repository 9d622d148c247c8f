package main

import (
	"bytes"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"golang.org/x/term"

	"github.com/phantom-dev/phantom/terminald/attach"
)

// The outer terminal while attached: what terminald's frames may set on
// it, and putting it back when attach is stopped by a signal.

// restoreOnSignals puts the terminal back (alternate screen off, mouse
// reporting off, cursor shown, pen reset, cooked mode) and exits with
// 128+signal when attach gets a signal that would end it: SIGTERM,
// SIGHUP (the terminal went away, or its emulator closes), SIGQUIT, and
// SIGINT (in raw mode Ctrl-C is a key sent to the tab, so a SIGINT comes
// from kill). Without this the human is left in the alternate screen with
// the status line painted and mouse reports typed at the shell. stop ends
// the watch.
func restoreOnSignals(in int, old *term.State) (stop func()) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-sigs:
			os.Stdout.WriteString(attach.RestoreClient)
			term.Restore(in, old)
			code := 1
			if s, ok := sig.(syscall.Signal); ok {
				code = 128 + int(s)
			}
			os.Exit(code)
		case <-done:
		}
	}()
	return func() {
		signal.Stop(sigs)
		close(done)
	}
}

// Environment switches for what terminald's frames may turn on in the
// outer terminal.
//
//   - PHANTOM_CLIPBOARD=off: copies stay in the session (prefix ] pastes
//     them) and are not sent to the terminal's clipboard as OSC 52;
//     PHANTOM_CLIPBOARD=on sends them even when the terminal did not
//     announce it takes them. Unset, attach asks the terminal
//     (attach_probe.go): xterm announces it only with allowWindowOps,
//     tmux with set-clipboard on.
//   - PHANTOM_MOUSE=off: the terminal keeps the mouse (its own selection
//     and scrolling); Phantom gets no clicks, wheel or drags, and programs
//     in the tabs get no mouse either. On by default.
var mouseOff = envOff("PHANTOM_MOUSE")

// envOff reports whether environment variable name turns something off.
func envOff(name string) bool {
	switch strings.ToLower(os.Getenv(name)) {
	case "off", "0", "no", "false":
		return true
	}
	return false
}

// mouseModeSets are the sequences that turn mouse reporting on.
var mouseModeSets = [][]byte{
	[]byte("\x1b[?9h"), []byte("\x1b[?1000h"), []byte("\x1b[?1002h"), []byte("\x1b[?1003h"),
	[]byte("\x1b[?1005h"), []byte("\x1b[?1006h"), []byte("\x1b[?1015h"), []byte("\x1b[?1016h"),
}

// filterOutput drops from a frame what the switches above turn off, and
// clipboard writes unless clipboard says the terminal takes them, and
// puts notifications in the form the terminal takes (notify). A frame
// is rendered by terminald, never a program's raw output, so these
// sequences appear whole and only where terminald put them.
func filterOutput(b []byte, clipboard bool, notify notifyForm) []byte {
	if !clipboard {
		b = dropOSC52(b)
	}
	b = rewriteNotify(b, notify) // attach_notify.go
	if mouseOff {
		for _, seq := range mouseModeSets {
			if bytes.Contains(b, seq) {
				b = bytes.ReplaceAll(b, seq, nil)
			}
		}
	}
	return b
}

// dropOSC52 removes OSC 52 clipboard writes (terminald ends them with
// BEL: attach.OSC52).
func dropOSC52(b []byte) []byte {
	start := []byte("\x1b]52;")
	for {
		i := bytes.Index(b, start)
		if i < 0 {
			return b
		}
		end := len(b)
		if j := bytes.IndexByte(b[i:], '\a'); j >= 0 {
			end = i + j + 1
		}
		b = append(b[:i:i], b[end:]...)
	}
}
