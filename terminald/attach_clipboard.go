package terminald

import (
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
	"github.com/phantom-dev/phantom/terminald/attach"
)

// attachClipboard is where an attach client says its copies go.
func attachClipboard(c *terminalv1.AttachClipboard) attach.Clipboard {
	switch c.GetState() {
	case terminalv1.AttachClipboard_STATE_WRITTEN:
		return attach.ClipboardWritten
	case terminalv1.AttachClipboard_STATE_NOT_ANNOUNCED:
		return attach.ClipboardNotAnnounced
	case terminalv1.AttachClipboard_STATE_OFF:
		return attach.ClipboardOff
	}
	return attach.ClipboardUnknown
}
