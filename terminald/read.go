package terminald

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"

	"github.com/phantom-dev/phantom/internal/errdefs"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
	"github.com/phantom-dev/phantom/terminald/screen"
	"github.com/phantom-dev/phantom/terminald/workspace"
)

// DefaultReadBytes bounds the text of one ReadOutput response when the
// request does not: 64 KiB, about 16,000 tokens of terminal text, under
// the ~25,000 tokens at which Claude Code truncates a tool result. The
// request may ask for 1 KiB to 1 MiB (the proto's max_bytes), so a page
// always fits the gRPC message limit (daemon.MaxMessageSize).
const DefaultReadBytes = 64 << 10

// readCursor is a place to continue reading a tab's history from, as
// ReadOutput hands it out in next_cursor and older_cursor.
//
// Its text form is "TAB.EPOCH.n.SEQ.OFF" for a forward read from byte OFF
// of line SEQ, and "TAB.EPOCH.o.SEQ.OFF.STOP" for the text before that
// position down to line STOP; EPOCH (base 36) names the run of the tab, so
// a cursor from before terminald restarted is refused rather than read
// against another history. Callers treat it as opaque.
type readCursor struct {
	tab   string
	epoch int64
	older bool
	pos   screen.Pos
	stop  uint64 // for older reads: the oldest line of the window
}

// String encodes c.
func (c readCursor) String() string {
	kind := "n"
	if c.older {
		kind = "o"
	}
	s := fmt.Sprintf("%s.%s.%s.%d.%d", c.tab, strconv.FormatInt(c.epoch, 36), kind, c.pos.Seq, c.pos.Off)
	if c.older {
		s += "." + strconv.FormatUint(c.stop, 10)
	}
	return s
}

// parseCursor decodes a cursor ReadOutput handed out.
func parseCursor(s string) (readCursor, error) {
	bad := func(why string) (readCursor, error) {
		return readCursor{}, fmt.Errorf("cursor %q is not one read_output returned (%s); read without a cursor to start again: %w",
			s, why, errdefs.ErrInvalidArgument)
	}
	f := strings.Split(s, ".")
	if len(f) != 5 && len(f) != 6 {
		return bad("wrong number of parts")
	}
	var c readCursor
	c.tab = f[0]
	if c.tab == "" {
		return bad("no tab")
	}
	epoch, err := strconv.ParseInt(f[1], 36, 64)
	if err != nil || epoch < 0 {
		return bad("bad run")
	}
	c.epoch = epoch
	switch {
	case f[2] == "n" && len(f) == 5:
	case f[2] == "o" && len(f) == 6:
		c.older = true
	default:
		return bad("bad kind")
	}
	if c.pos.Seq, err = parseDecimal(f[3]); err != nil {
		return bad("bad line number")
	}
	off, err := parseDecimal(f[4])
	if err != nil || off > 1<<40 {
		return bad("bad offset")
	}
	c.pos.Off = int(off)
	if c.older {
		if c.stop, err = parseDecimal(f[5]); err != nil || c.stop > c.pos.Seq {
			return bad("bad window")
		}
	}
	return c, nil
}

// parseDecimal parses a plain decimal number: digits only, no sign, no
// leading zeros, so that each cursor has one spelling.
func parseDecimal(s string) (uint64, error) {
	if s == "" || len(s) > 1 && s[0] == '0' || strings.TrimLeft(s, "0123456789") != "" {
		return 0, strconv.ErrSyntax
	}
	return strconv.ParseUint(s, 10, 64)
}

// ReadOutput reads a tab's rendered text: its last lines, or a page from a
// cursor, bounded by max_bytes (see the proto).
func (s *Service) ReadOutput(ctx context.Context, r *terminalv1.ReadOutputRequest) (*terminalv1.ReadOutputResponse, error) {
	if r.GetLastCommand() {
		return s.readLastCommand(r)
	}
	maxBytes := DefaultReadBytes
	if r.MaxBytes != nil {
		maxBytes = int(r.GetMaxBytes())
	}
	var cur *readCursor
	if r.GetCursor() != "" {
		c, err := parseCursor(r.GetCursor())
		if err != nil {
			return nil, err
		}
		if c.tab != r.GetTerminalId() {
			return nil, fmt.Errorf("cursor is for tab %s, not tab %s: pass the cursor a read of tab %s returned: %w",
				c.tab, r.GetTerminalId(), r.GetTerminalId(), errdefs.ErrInvalidArgument)
		}
		cur = &c
	}
	if r.GetWaitFor() != "" {
		if cur != nil && cur.older {
			return nil, fmt.Errorf("wait_for waits for new output and takes a next_cursor, not an older_cursor: %w", errdefs.ErrInvalidArgument)
		}
		return s.readWaiting(ctx, r, cur, maxBytes)
	}
	if r.WaitSeconds != nil {
		return nil, fmt.Errorf("wait_seconds bounds wait_for, which is not set: give wait_for (a regular expression, or \"idle\") too: %w",
			errdefs.ErrInvalidArgument)
	}
	var resp *terminalv1.ReadOutputResponse
	var rerr error
	err := s.ws.ReadScreenSeen(r.GetTerminalId(), func(scr *screen.Screen, epoch int64, seen screen.Pos) {
		if cur != nil && cur.epoch != epoch {
			rerr = fmt.Errorf("cursor is from an earlier run of tab %s (terminald restarted since) whose output is gone; read without a cursor: %w",
				cur.tab, errdefs.ErrFailedPrecondition)
			return
		}
		resp = readPage(scr, r, cur, epoch, maxBytes)
		floorNext(scr, resp, epoch, seen)
	})
	if err != nil {
		return nil, err
	}
	if rerr != nil {
		return nil, rerr
	}
	resp.TerminalId = r.GetTerminalId()
	return resp, nil
}

// readPage reads one page for r from scr; cur is r's cursor, nil when it
// has none.
func readPage(scr *screen.Screen, r *terminalv1.ReadOutputRequest, cur *readCursor, epoch int64, maxBytes int) *terminalv1.ReadOutputResponse {
	tab := r.GetTerminalId()
	cursor := func(older bool, pos screen.Pos, stop uint64) string {
		return readCursor{tab: tab, epoch: epoch, older: older, pos: pos, stop: stop}.String()
	}
	maxLines := int(r.GetLines()) // with a cursor, 0 (unset) is no limit
	var p screen.Page
	var stop uint64
	var alt, older bool
	switch {
	case cur == nil:
		n := DefaultReadLines
		if r.Lines != nil {
			n = maxLines
		}
		maxLines = n
		_, next := scr.HistoryBounds()
		stop = next - min(next, uint64(n))
		if ap, ok := scr.ReadAltScreen(n, maxBytes); ok {
			p, alt = ap, true
		} else {
			p, older = scr.ReadBackward(screen.Pos{Seq: next}, stop, n, maxBytes), true
		}
	case cur.older:
		stop = cur.stop
		p, older = scr.ReadBackward(cur.pos, stop, maxLines, maxBytes), true
	default:
		p = scr.ReadForward(cur.pos, maxLines, maxBytes)
	}
	resp := &terminalv1.ReadOutputResponse{
		Lines:           p.Lines,
		FirstSeq:        p.Start.Seq,
		FirstLineOffset: uint64(p.Start.Off),
		LastLineCut:     p.LastCut,
		NextCursor:      cursor(false, p.End, 0),
		TrimmedLines:    p.Trimmed,
		AlternateScreen: alt,
	}
	if alt {
		// The rows are not history: cursors read the history before the
		// full-screen program.
		end := scr.HistoryEnd()
		resp.FirstSeq, resp.NextCursor = 0, cursor(false, end, 0)
		resp.OlderCursor = cursor(true, end, stop)
	} else if older && p.More {
		resp.OlderCursor = cursor(true, p.Start, stop)
	}
	resp.More = !older && !alt && p.More
	resp.Note = readNote(resp, p, older, stop, maxBytes, maxLines)
	return resp
}

// floorNext moves a response's next_cursor, when the read reached the
// end of the history, up to seen: the end of the prompt the shell sits at,
// drawn (Workspace.ReadScreenSeen). A read that caught the shell redrawing
// its prompt — erased, not yet printed again — would otherwise hand out a
// cursor before it, and the redrawn prompt would read as new output.
func floorNext(scr *screen.Screen, resp *terminalv1.ReadOutputResponse, epoch int64, seen screen.Pos) {
	if resp == nil || resp.GetMore() || resp.GetNextCursor() == "" || seen == (screen.Pos{}) {
		return
	}
	c, err := parseCursor(resp.GetNextCursor())
	if err != nil || c.epoch != epoch || !posLess(c.pos, seen) {
		return
	}
	if posLess(c.pos, scr.HistoryEnd()) {
		return // a page that stopped short of the end: text is left to read
	}
	c.pos = seen
	resp.NextCursor = c.String()
}

// posLess reports whether a comes before b.
func posLess(a, b screen.Pos) bool {
	return a.Seq < b.Seq || a.Seq == b.Seq && a.Off < b.Off
}

// readNote says in words what a page left out and how to read it.
func readNote(resp *terminalv1.ReadOutputResponse, p screen.Page, older bool, stop uint64, maxBytes, maxLines int) string {
	var parts []string
	if resp.AlternateScreen {
		parts = append(parts, fmt.Sprintf("A full-screen program runs in this tab: these are the %d rows it shows, not its output history; "+
			"call read_output with cursor=older_cursor to read the history before it.", len(p.Lines)))
		if p.More {
			parts = append(parts, fmt.Sprintf("Only the bottom rows fit %d bytes; ask with a larger max_bytes for more.", maxBytes))
		}
	}
	if p.Trimmed > 0 {
		parts = append(parts, fmt.Sprintf("%d of the lines asked for were already dropped from the scrollback.", p.Trimmed))
	}
	limit := fmt.Sprintf("max_bytes (%d)", maxBytes)
	if maxLines > 0 && len(p.Lines) == maxLines {
		limit = fmt.Sprintf("lines (%d)", maxLines)
	}
	if resp.OlderCursor != "" && !resp.AlternateScreen {
		if p.Start.Off > 0 {
			parts = append(parts, fmt.Sprintf("The first line is cut: it is the end of a line longer than max_bytes, from byte %d on; "+
				"call read_output with cursor=older_cursor for the part before it and the lines before that.", p.Start.Off))
		} else {
			parts = append(parts, fmt.Sprintf("These are the newest %d lines that fit %s; %d older lines asked for remain: "+
				"call read_output with cursor=older_cursor to read them.", len(p.Lines), limit, p.Start.Seq-stop-p.Trimmed))
		}
	} else if p.Start.Off > 0 && len(p.Lines) > 0 && !resp.AlternateScreen {
		parts = append(parts, fmt.Sprintf("The first line continues a line from byte %d on.", p.Start.Off))
	}
	if p.LastCut {
		if older {
			parts = append(parts, "The last line is cut: its rest was in the response read before this one.")
		} else {
			parts = append(parts, fmt.Sprintf("The last line is cut after byte %d: it is longer than max_bytes; "+
				"call read_output with cursor=next_cursor for the rest.", p.End.Off))
		}
	} else if resp.More {
		parts = append(parts, fmt.Sprintf("More lines follow than fit %s: call read_output with cursor=next_cursor to read them.", limit))
	}
	return strings.Join(parts, " ")
}

// Run-and-wait, last command and wait_for (issue 15).

// DefaultCommandLines is how many output lines a command result holds
// when the request does not say.
const DefaultCommandLines = 200

// DefaultWaitSeconds is how long wait_for waits when not told.
const DefaultWaitSeconds = 30

// Token thrift: lines longer than longLine bytes keep their first
// keepLine bytes and a marker.
const (
	longLine = 2000
	keepLine = 1000
)

// compactLines makes a command's output cheaper to read: each run of blank
// lines becomes one, and lines longer than longLine bytes keep their first
// keepLine bytes followed by a marker saying how much was cut. Trailing
// spaces are already gone (rendering trims them). It returns the lines and
// what it did.
func compactLines(lines []string) ([]string, *terminalv1.Compaction) {
	c := &terminalv1.Compaction{}
	out := make([]string, 0, len(lines))
	blank := false
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			if blank {
				c.BlankLinesRemoved++
				continue
			}
			blank = true
			out = append(out, "")
			continue
		}
		blank = false
		if len(l) > longLine {
			k := keepLine
			for k > 0 && !utf8.RuneStart(l[k]) {
				k--
			}
			cut := len(l) - k
			c.LinesCut++
			c.BytesCut += uint64(cut)
			l = fmt.Sprintf("%s[… %d more bytes cut]", l[:k], cut)
		}
		out = append(out, l)
	}
	return out, c
}

// commandResult reads command c's output from tab id: the newest lines of
// it that fit maxLines and maxBytes, compacted. It also returns a cursor
// just after what it read.
func (s *Service) commandResult(id string, c workspace.Command, maxLines, maxBytes int) (*terminalv1.CommandResult, string, error) {
	res := &terminalv1.CommandResult{Command: c.Text, StartedAt: stamp(c.StartedAt)}
	end := c.End
	if c.Finished {
		res.FinishedAt = stamp(c.FinishedAt)
		res.DurationMs = duration(c.StartedAt, c.FinishedAt)
		if c.HasExit {
			code := int32(c.ExitCode)
			res.ExitCode = &code
		}
	} else {
		res.DurationMs = duration(c.StartedAt, time.Now())
	}
	var next string
	err := s.ws.ReadScreen(id, func(scr *screen.Screen, epoch int64) {
		if !c.Finished {
			end = scr.HistoryEnd()
		}
		if end.Seq < c.Start.Seq {
			end = screen.Pos{Seq: c.Start.Seq}
		}
		p := scr.ReadRange(c.Start, end, maxLines, maxBytes)
		total := end.Seq - c.Start.Seq
		if end.Off > 0 {
			total++
		}
		res.TotalLines = total
		res.Output, res.Compaction = compactLines(p.Lines)
		res.Truncated = p.More || p.Trimmed > 0
		res.OutputCursor = readCursor{tab: id, epoch: epoch, pos: c.Start}.String()
		next = readCursor{tab: id, epoch: epoch, pos: end}.String()
		res.Note = commandNote(res, c, p, maxLines, maxBytes)
	})
	if err != nil {
		return nil, "", err
	}
	return res, next, nil
}

// commandNote says in words what a command result left out or changed.
func commandNote(res *terminalv1.CommandResult, c workspace.Command, p screen.Page, maxLines, maxBytes int) string {
	var parts []string
	if c.Cleared {
		parts = append(parts, "The command cleared the screen; its output before that is not included.")
	}
	if c.TimesLost {
		parts = append(parts, "When it ran is not fully known (finished_at or started_at is empty, duration_ms 0): "+
			"terminald restarted (phantom upgrade, or a crash) before it could keep the command's times.")
	}
	if p.Trimmed > 0 {
		parts = append(parts, fmt.Sprintf("The first %d lines of its output were already dropped from the scrollback.", p.Trimmed))
	}
	if p.More {
		parts = append(parts, fmt.Sprintf("Only its last %d of %d lines fit the line limit (%d) and max_bytes (%d); "+
			"read_output with cursor=output_cursor reads all of them, exactly.", len(p.Lines), res.TotalLines, maxLines, maxBytes))
	}
	if cp := res.Compaction; cp.BlankLinesRemoved > 0 || cp.LinesCut > 0 {
		parts = append(parts, fmt.Sprintf("To save tokens, %d blank lines were removed (runs of blank lines collapsed to one) and %d long lines cut (%d bytes); "+
			"read_output with cursor=output_cursor returns every line exactly.", cp.BlankLinesRemoved, cp.LinesCut, cp.BytesCut))
	}
	if c.Finished && !c.HasExit {
		parts = append(parts, "The exit code is unknown: the tab has no shell integration, so the end was seen as the shell taking the terminal back.")
	}
	if c.Reported && c.Typed != "" && strings.TrimSpace(c.Text) != strings.TrimSpace(c.Typed) {
		parts = append(parts, "The shell reports running a different command line than the one typed (history expansion such as !! changes it): command holds what the shell ran.")
	}
	return strings.Join(parts, " ")
}

// duration is the milliseconds from start to end; 0 when either is not
// known.
func duration(start, end time.Time) int64 {
	if start.IsZero() || end.IsZero() {
		return 0
	}
	return end.Sub(start).Milliseconds()
}

// stamp formats t for a response: RFC 3339, milliseconds, UTC; "" for the
// zero time.
func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z07:00")
}

// lastCommandSummary is the last finished command of tab id without its
// output; nil when none is known.
func (s *Service) lastCommandSummary(id string) *terminalv1.CommandResult {
	c, ok, err := s.ws.LastCommand(id)
	if err != nil || !ok {
		return nil
	}
	return summary(c)
}

// summary is c without its output, for list_terminals.
func summary(c workspace.Command) *terminalv1.CommandResult {
	res := &terminalv1.CommandResult{Command: c.Text, StartedAt: stamp(c.StartedAt), FinishedAt: stamp(c.FinishedAt),
		DurationMs: duration(c.StartedAt, c.FinishedAt)}
	if c.HasExit {
		code := int32(c.ExitCode)
		res.ExitCode = &code
	}
	return res
}

// withLastCommands returns ts with the last finished command added to
// each tab the caller sees in full (a redacted tab's message has none: the command
// line is what the human typed). The messages of ts may be shared
// (cost_list.go's cache) and are not changed: a tab with a last command
// gets a copy, kept in s.cmdTerms while neither the tab's message nor its
// command change.
func (s *Service) withLastCommands(ts []*terminalv1.Terminal, full fullView) []*terminalv1.Terminal {
	out := make([]*terminalv1.Terminal, len(ts))
	s.cmdTerms.mu.Lock()
	defer s.cmdTerms.mu.Unlock()
	if s.cmdTerms.m == nil || len(s.cmdTerms.m) > 2*len(ts)+16 {
		s.cmdTerms.m = map[string]cmdTerm{}
	}
	for i, t := range ts {
		if !full.at(i) {
			out[i] = t
			continue
		}
		c, ok, err := s.ws.LastCommand(t.GetId())
		if err != nil || !ok {
			out[i] = t
			continue
		}
		if e, hit := s.cmdTerms.m[t.GetId()]; hit && e.base == t && e.cmd == c {
			out[i] = e.pb
			continue
		}
		pb := proto.CloneOf(t)
		pb.LastCommand = summary(c)
		s.cmdTerms.m[t.GetId()] = cmdTerm{base: t, cmd: c, pb: pb}
		out[i] = pb
	}
	return out
}

// cmdTerms caches tabs' messages with their last command added.
type cmdTerms struct {
	mu sync.Mutex
	m  map[string]cmdTerm
}

// cmdTerm is one tab's message with its last command.
type cmdTerm struct {
	base *terminalv1.Terminal // the message without it
	cmd  workspace.Command
	pb   *terminalv1.Terminal
}

// outputLimits reads a request's line and byte bounds for a command's
// output, with the defaults.
func outputLimits(lines, bytes *int32) (int, int) {
	maxLines, maxBytes := DefaultCommandLines, DefaultReadBytes
	if lines != nil {
		maxLines = int(*lines)
	}
	if bytes != nil {
		maxBytes = int(*bytes)
	}
	return maxLines, maxBytes
}

// readLastCommand answers a ReadOutput with last_command.
func (s *Service) readLastCommand(r *terminalv1.ReadOutputRequest) (*terminalv1.ReadOutputResponse, error) {
	id := r.GetTerminalId()
	if r.GetCursor() != "" || r.GetWaitFor() != "" {
		return nil, fmt.Errorf("last_command reads the last command's own output and takes no cursor or wait_for; "+
			"call read_output once with last_command alone: %w", errdefs.ErrInvalidArgument)
	}
	c, ok, err := s.ws.LastCommand(id)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("tab %s has no finished command on record: its shell reports commands only with shell integration "+
			"(bash, zsh and fish tabs), and none has finished since the tab started; read_output without last_command reads its lines: %w",
			id, errdefs.ErrFailedPrecondition)
	}
	maxLines, maxBytes := outputLimits(r.Lines, r.MaxBytes)
	res, next, err := s.commandResult(id, c, maxLines, maxBytes)
	if err != nil {
		return nil, err
	}
	return &terminalv1.ReadOutputResponse{TerminalId: id, LastCommand: res, NextCursor: next, Note: res.GetNote()}, nil
}

// readWaited reads what a wait_for read returns once the wait is over,
// from start (the matching line when matched, else where the search
// started) on, bounded by lines and max_bytes as a read without wait_for
// is: with a cursor, a page forward from start; without one, on a match
// the lines from the matching line on, and otherwise the newest lines
// since start (older_cursor reads the rest), as a plain read returns the
// newest lines of a tab.
func readWaited(scr *screen.Screen, r *terminalv1.ReadOutputRequest, cur *readCursor, start screen.Pos, matched bool, epoch int64, maxBytes int) *terminalv1.ReadOutputResponse {
	id := r.GetTerminalId()
	pr := &terminalv1.ReadOutputRequest{TerminalId: id, MaxBytes: r.MaxBytes, Lines: r.Lines}
	if cur != nil {
		return readPage(scr, pr, &readCursor{tab: id, epoch: epoch, pos: start}, epoch, maxBytes)
	}
	n := int32(DefaultReadLines)
	if r.Lines != nil {
		n = r.GetLines()
	}
	pr.Lines = &n
	if matched {
		return readPage(scr, pr, &readCursor{tab: id, epoch: epoch, pos: start}, epoch, maxBytes)
	}
	_, next := scr.HistoryBounds()
	return readPage(scr, pr, &readCursor{tab: id, epoch: epoch, older: true, pos: screen.Pos{Seq: next}, stop: start.Seq}, epoch, maxBytes)
}

// newestOf qualifies "the lines from the start of the search" for a
// wait without a cursor, which returns the newest of them.
func newestOf(cur *readCursor) string {
	if cur != nil {
		return ""
	}
	return " (the newest of them, within lines and max_bytes)"
}

// waitFor is a parsed wait_for: the tab going idle, or a pattern.
type waitFor struct {
	idle bool
	re   *regexp.Regexp
}

// parseWaitFor reads wait_for: "idle", or a regular expression in RE2
// syntax.
func parseWaitFor(s string) (waitFor, error) {
	if s == "idle" {
		return waitFor{idle: true}, nil
	}
	if strings.TrimSpace(s) == "" {
		return waitFor{}, fmt.Errorf("wait_for is blank: give a regular expression to wait for, or \"idle\": %w", errdefs.ErrInvalidArgument)
	}
	re, err := regexp.Compile(s)
	if err != nil {
		return waitFor{}, fmt.Errorf("wait_for %q is not a regular expression in RE2 syntax (%v); escape special characters with \\, "+
			"or pass \"idle\" to wait for the prompt: %w", s, err, errdefs.ErrInvalidArgument)
	}
	return waitFor{re: re}, nil
}

// readWaiting answers a ReadOutput with wait_for: it waits, then reads
// from the matching line (or, for idle and on timeout, from where the
// search started).
func (s *Service) readWaiting(ctx context.Context, r *terminalv1.ReadOutputRequest, cur *readCursor, maxBytes int) (*terminalv1.ReadOutputResponse, error) {
	id := r.GetTerminalId()
	wf, err := parseWaitFor(r.GetWaitFor())
	if err != nil {
		return nil, err
	}
	wait := DefaultWaitSeconds * time.Second
	if r.WaitSeconds != nil {
		wait = time.Duration(r.GetWaitSeconds()) * time.Second
	}
	var from screen.Pos
	var rerr error
	err = s.ws.ReadScreen(id, func(scr *screen.Screen, e int64) {
		if cur != nil {
			if cur.epoch != e {
				rerr = fmt.Errorf("cursor is from an earlier run of tab %s (terminald restarted since) whose output is gone; read without a cursor: %w",
					cur.tab, errdefs.ErrFailedPrecondition)
			}
			from = cur.pos
			return
		}
		n := uint64(DefaultReadLines)
		if r.Lines != nil {
			n = uint64(r.GetLines())
		}
		_, next := scr.HistoryBounds()
		from = screen.Pos{Seq: next - min(next, n)}
	})
	if err != nil {
		return nil, err
	}
	if rerr != nil {
		return nil, rerr
	}
	var match func(string) bool
	if wf.re != nil {
		match = wf.re.MatchString
	}
	seq, ok, err := s.ws.WaitFor(ctx, id, from, wf.idle, match, wait)
	if err != nil {
		return nil, err
	}
	start := from
	if ok && !wf.idle && seq > from.Seq {
		start = screen.Pos{Seq: seq}
	}
	var resp *terminalv1.ReadOutputResponse
	err = s.ws.ReadScreenSeen(id, func(scr *screen.Screen, e int64, seen screen.Pos) {
		resp = readWaited(scr, r, cur, start, ok && !wf.idle, e, maxBytes)
		floorNext(scr, resp, e, seen)
	})
	if err != nil {
		return nil, err
	}
	resp.TerminalId = id
	resp.WaitMatched, resp.WaitTimedOut = ok, !ok
	if ok && !wf.idle {
		resp.MatchedSeq = seq
	}
	switch {
	case !ok:
		resp.Note = strings.TrimSpace(fmt.Sprintf("Nothing matched wait_for within %s; these are the lines printed from the start of the search on%s. "+
			"Call again with cursor=next_cursor to keep waiting for new output only. %s", wait, newestOf(cur), resp.Note))
	case wf.idle:
		resp.Note = strings.TrimSpace(fmt.Sprintf("The tab is idle; these are the lines printed from the start of the search on%s. %s", newestOf(cur), resp.Note))
	}
	return resp, nil
}
