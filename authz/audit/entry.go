// Package audit is authz's audit log: one JSON object per line, appended
// to a file in the state directory (mode 0600), rotated by size with a few
// old files kept. Every decision authz makes is a line: a sheet raised or
// answered (and by which process, on which terminal), a call allowed (by a
// standing grant, a once grant or an answer — with the exact text
// run_command types and the tab it types into), denied, turned away,
// timed out or withdrawn, a grant revoked (by the CLI, or by a change to
// the grants file), the grants file refused or usable again.
//
// Writing never holds a decision up for long: lines go through a bounded
// queue to one writer goroutine. Record drops a line when the queue is
// full (and counts it); Commit waits, up to a bound, until its line is on
// disk, for the calls that must not happen unrecorded (see authz).
//
// A long subject or command is written in full once per file, with its
// SHA-256; later lines of the file carry only the digest (see ReferMin),
// and Read puts the text back.
//
// Capacity and budget: the log is rotated at 8 MiB with four old files
// kept, so about 32 MiB of older lines are always on disk. authz.Budget
// bounds what agents can add: lines they cause without the human (sheets
// raised; calls refused, turned away, withdrawn, timed out; reads allowed)
// at most 256 KiB an hour for all agents together (64 KiB per tab), plus
// one hour's worth at once and a 16 KiB summary of what was left out —
// 256 KiB × (hours + 1) + 16 KiB, so older lines survive more than five
// days of the worst such flood. Acts under standing grants (commands
// typed, configuration and worktree changes) are each recorded, before
// they happen, within an act budget of 2 MiB an hour for all (512 KiB per
// caller); beyond it they are refused, not done. With both, agents add at
// most 2.25 MiB × (hours + 1) + 16 KiB: more than 13 hours. Only what
// the human does comes on top: answers (and the acts allowed on their
// sheets), revocations, edits of the grants file.
package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
)

// The events, the value of Entry.Event.
const (
	// SheetRaised: a call became a sheet, shown to the human.
	SheetRaised = "sheet_raised"
	// SheetAnswered: the human answered a sheet (Decision, Scope, By).
	SheetAnswered = "sheet_answered"
	// Allowed: a call was allowed, by a standing grant, a once grant or
	// an answer (Grant, GrantKind); for run_command with Target and
	// Command.
	Allowed = "allowed"
	// Denied: the human denied the call's sheet.
	Denied = "denied"
	// TurnedAway: refused without a sheet: the caller is turned away
	// after a denial, or has too many requests waiting.
	TurnedAway = "turned_away"
	// TimedOut: nobody answered the call's sheet in time.
	TimedOut = "timed_out"
	// Withdrawn: the call's connection closed (or its caller gave up, or
	// authz stopped) before the human answered.
	Withdrawn = "withdrawn"
	// Refused: refused for another reason (Reason): the grants file is
	// refused, the arguments do not fit, the tab is busy, the audit log
	// cannot be written.
	Refused = "refused"
	// GrantRevoked: a grant was revoked, by the CLI (By) or by a change
	// to the grants file (By.Via).
	GrantRevoked = "grant_revoked"
	// GrantAdded: the grants file gained a grant authz did not write; it
	// is pending until the human accepts it or authz restarts.
	GrantAdded = "grant_added"
	// GrantAccepted: the human put a pending grant in force (By).
	GrantAccepted = "grant_accepted"
	// GrantsFileRefused: the grants file became unusable (Reason); every
	// call that needs a grant is refused.
	GrantsFileRefused = "grants_file_refused"
	// GrantsFileUsable: the grants file is usable again.
	GrantsFileUsable = "grants_file_usable"
	// GrantsFileUpdated: changes held in memory after a failed write are
	// written now.
	GrantsFileUpdated = "grants_file_updated"
	// AuthzStarted: authz started (a quiet stretch before it is authz
	// not running, not nothing happening).
	AuthzStarted = "authz_started"
	// Summary: lines about calls agents can repeat at will were left out
	// to keep the log within its budget (see the package doc); Counts
	// says how many, by caller and event, since Since.
	Summary = "summary"
)

// Entry is one line of the log. Text an agent chose (client name, tab
// title, subject, command) is stored as it came: readers must escape it
// before showing it on a terminal.
type Entry struct {
	Time  time.Time `json:"time"`
	Event string    `json:"event"`
	// Sheet is the sheet the line is about, if any.
	Sheet string `json:"sheet,omitempty"`
	// Grant is the grant that allowed the call, the one an answer made,
	// or the one revoked.
	Grant string `json:"grant,omitempty"`
	// GrantKind is "always" or "once".
	GrantKind string `json:"grant_kind,omitempty"`
	// Client, Connection, Tab and PID are the caller: the client name,
	// its connection, its tab (empty outside tabs) and its process.
	Client     string `json:"client,omitempty"`
	Connection string `json:"connection,omitempty"`
	Tab        string `json:"tab,omitempty"`
	PID        int32  `json:"pid,omitempty"`
	// Program is the program behind the caller as the process tree
	// showed it; a standing grant is for that program.
	Program string `json:"program,omitempty"`
	// Tool, Capability and Reach are what the call needed.
	Tool       string `json:"tool,omitempty"`
	Capability string `json:"capability,omitempty"`
	Reach      string `json:"reach,omitempty"`
	// Scope is the scope of the grant given or revoked.
	Scope string `json:"scope,omitempty"`
	// Project keys the grant.
	Project string `json:"project,omitempty"`
	// Subject is the call's decisive argument in words, as the sheet
	// showed it.
	Subject string `json:"subject,omitempty"`
	// SubjectSHA256 is the SHA-256 of a long Subject. A line whose file
	// already holds the text carries only the digest; Read puts the text
	// back from the earlier line.
	SubjectSHA256 string `json:"subject_sha256,omitempty"`
	// Target is the tab the call acts on (run_command: the tab typed
	// into).
	Target string `json:"target,omitempty"`
	// Command is the exact text run_command types, unescaped.
	Command string `json:"command,omitempty"`
	// CommandSHA256 is the SHA-256 of a long Command, written like
	// SubjectSHA256.
	CommandSHA256 string `json:"command_sha256,omitempty"`
	// Decision is the human's answer: deny, once or always.
	Decision string `json:"decision,omitempty"`
	// Reason is why a call was refused, or what went wrong.
	Reason string `json:"reason,omitempty"`
	// By is who answered or revoked.
	By *Actor `json:"by,omitempty"`
	// Repeated counts the calls just like this one (same event, caller,
	// tool, target and grant) left out since the previous such line: a
	// caller that asks in a loop gets one line a minute, not one per
	// call, so that it cannot push the rest of the log out by rotation.
	Repeated int `json:"repeated,omitempty"`
	// Since and Counts are a summary's: the lines left out since Since,
	// counted by caller, event and tool.
	Since  time.Time `json:"since,omitzero"`
	Counts []Count   `json:"counts,omitempty"`
}

// Count is one row of a summary: how many lines about one caller's calls
// of one tool, with one outcome, were left out.
type Count struct {
	Client string `json:"client,omitempty"`
	Tab    string `json:"tab,omitempty"`
	Event  string `json:"event,omitempty"`
	Tool   string `json:"tool,omitempty"`
	// Others is set on the row that counts the callers and events not
	// listed one by one (a summary lists a bounded number of rows).
	Others bool `json:"others,omitempty"`
	N      int  `json:"n"`
}

// Actor is who answered a sheet or revoked a grant.
type Actor struct {
	// PID is the process, as the kernel named it on the socket.
	PID int `json:"pid,omitempty"`
	// UID is its user.
	UID int `json:"uid,omitempty"`
	// Command is its command line (for an answer given in `phantom
	// attach`, terminald's, which relays the attach client's keys).
	Command string `json:"command,omitempty"`
	// Terminal is its controlling terminal, e.g. /dev/pts/3; empty when
	// it has none.
	Terminal string `json:"terminal,omitempty"`
	// Via is how, when not a process: "edit of the grants file",
	// "removal of the grants file", "TCP".
	Via string `json:"via,omitempty"`
	// For is, for an answer terminald relayed from `phantom attach`, the
	// attach client whose human answered (as terminald named it).
	For *Actor `json:"for,omitempty"`
}

// maxLine bounds one line a reader accepts.
const maxLine = 4 << 20

// ParseLine reads one line of the log. It refuses anything that is not a
// JSON object with a time and an event.
func ParseLine(b []byte) (Entry, error) {
	var e Entry
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return e, errors.New("not a JSON object")
	}
	if err := json.Unmarshal(b, &e); err != nil {
		return e, err
	}
	if e.Event == "" || e.Time.IsZero() {
		return e, errors.New("no time or no event")
	}
	return e, nil
}

// BadLine is a line of the log that could not be read.
type BadLine struct {
	// Line is its number in its file, from 1.
	Line int
	Err  error
}

func (b BadLine) Error() string { return fmt.Sprintf("line %d: %v", b.Line, b.Err) }

// Read reads the entries of one log file from r, keeping those at or
// after since (all when since is zero). Lines that cannot be read — a
// line cut short by a full disk or a crash, a line too long — are skipped
// and returned as BadLines; only an error of r itself fails the read.
// Texts written by reference (see ReferMin) are put back from the earlier
// line of the file that holds them; read a file whole, not from the
// middle, or such a text stays empty (its digest set).
func Read(r io.Reader, since time.Time) ([]Entry, []BadLine, error) {
	br := bufio.NewReader(r)
	var (
		out   []Entry
		bad   []BadLine
		texts = resolver{}
	)
	for n := 1; ; n++ {
		line, long, err := readLine(br)
		if err != nil && !errors.Is(err, io.EOF) {
			return out, bad, err
		}
		switch {
		case long:
			bad = append(bad, BadLine{Line: n, Err: fmt.Errorf("longer than %d bytes", maxLine)})
		case len(bytes.TrimSpace(line)) > 0:
			e, perr := ParseLine(line)
			if perr == nil && !texts.resolve(&e) {
				perr = errors.New("a text does not match its SHA-256: the line was altered")
			}
			if perr != nil {
				bad = append(bad, BadLine{Line: n, Err: perr})
			} else if since.IsZero() || !e.Time.Before(since) {
				out = append(out, e)
			}
		}
		if err != nil {
			return out, bad, nil
		}
	}
}

// readLine reads up to the next newline; a line longer than maxLine is
// skipped whole and reported as long.
func readLine(br *bufio.Reader) (line []byte, long bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !long {
			if len(line)+len(chunk) > maxLine {
				long, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return line, long, err
	}
}
