package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/phantom-dev/phantom/authz/audit"
	"github.com/phantom-dev/phantom/internal/paths"
)

// auditCmd is `phantom audit`: authz's audit log, read from the files in
// the state directory (it works while authz is down).
func auditCmd() *cobra.Command {
	var (
		asJSON bool
		since  string
	)
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Show the audit log of permission decisions (sheets, answers, allowed calls, typed commands, revocations)",
		Long: "Show authz's audit log: every sheet raised and answered (and by which process, on which terminal), every call\n" +
			"allowed by a grant or an answer (with the exact command run_command typed and its tab), every denial, turn-away,\n" +
			"time-out and withdrawal, and every grant revoked, by `phantom grants revoke` or by a change to grants.json.\n" +
			"Calls an agent repeats at will beyond the audit budget are counted in summary lines instead of listed.\n" +
			"--since takes a duration (90m, 2h, 3d) or a time (2026-11-30, \"2026-11-30 14:05\", 14:05, RFC 3339).",
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			l, err := paths.Default()
			if err != nil {
				return err
			}
			from, err := parseSince(since, time.Now())
			if err != nil {
				return err
			}
			entries, skipped, err := readAudit(filepath.Join(l.State, audit.FileName), from)
			if err != nil {
				return err
			}
			if asJSON {
				return printAuditJSON(os.Stdout, entries, skipped)
			}
			for _, s := range skipped {
				fmt.Fprintf(os.Stderr, "phantom audit: skipped %s\n", s)
			}
			return printAuditTable(os.Stdout, entries)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON: the entries as the log holds them")
	cmd.Flags().StringVar(&since, "since", "", "only entries since this duration ago or this time")
	return cmd
}

// skippedLine is a line of the log that could not be read.
type skippedLine struct {
	File  string `json:"file"`
	Line  int    `json:"line"`
	Error string `json:"error"`
}

func (s skippedLine) String() string { return fmt.Sprintf("%s line %d: %s", s.File, s.Line, s.Error) }

// readAudit reads the log and its rotated files, oldest first, keeping
// the entries at or after since.
func readAudit(path string, since time.Time) ([]audit.Entry, []skippedLine, error) {
	var (
		out     []audit.Entry
		skipped []skippedLine
	)
	for _, name := range audit.Files(path) {
		f, err := os.Open(name)
		if errors.Is(err, os.ErrNotExist) {
			continue // rotated away meanwhile
		}
		if err != nil {
			return nil, nil, fmt.Errorf("read the audit log: %w", err)
		}
		entries, bad, err := audit.Read(f, since)
		f.Close()
		if err != nil {
			return nil, nil, fmt.Errorf("read the audit log %s: %w", name, err)
		}
		out = append(out, entries...)
		for _, b := range bad {
			skipped = append(skipped, skippedLine{File: name, Line: b.Line, Error: b.Err.Error()})
		}
	}
	return out, skipped, nil
}

// printAuditJSON prints {"entries": [...], "skipped": [...]}.
func printAuditJSON(w io.Writer, entries []audit.Entry, skipped []skippedLine) error {
	if entries == nil {
		entries = []audit.Entry{}
	}
	if skipped == nil {
		skipped = []skippedLine{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Entries []audit.Entry `json:"entries"`
		Skipped []skippedLine `json:"skipped"`
	}{entries, skipped})
}

// printAuditTable prints one row per entry; text an agent chose is
// escaped (see printable).
func printAuditTable(w io.Writer, entries []audit.Entry) error {
	if len(entries) == 0 {
		fmt.Fprintln(w, "The audit log holds nothing in that time.")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tEVENT\tCLIENT\tTAB\tWHAT")
	for _, e := range entries {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", e.Time.Local().Format("2006-01-02 15:04:05"), e.Event,
			dash(printable(e.Client)), dash(printable(e.Tab)), describeEntry(e))
	}
	return tw.Flush()
}

// describeEntry says what an entry records, in one line.
func describeEntry(e audit.Entry) string {
	var parts []string
	add := func(format string, args ...any) { parts = append(parts, fmt.Sprintf(format, args...)) }
	if e.Sheet != "" {
		add("sheet %s", e.Sheet)
	}
	switch {
	case e.Command != "":
		add("typed %s into tab %s", strconv.Quote(e.Command), printable(e.Target))
	case e.CommandSHA256 != "":
		add("typed the command of SHA-256 %s into tab %s (its text is not in this file of the log)", e.CommandSHA256, printable(e.Target))
	case e.Tool != "" && e.Capability != "":
		add("%s (%s, reach %s)", printable(e.Tool), e.Capability, e.Reach)
	case e.Tool != "":
		add("%s", printable(e.Tool))
	case e.Capability != "":
		add("%s", e.Capability)
	}
	if e.Decision != "" {
		add("answer %s", e.Decision)
	}
	if e.Grant != "" {
		g := "grant " + e.Grant
		if e.GrantKind != "" {
			g += " (" + e.GrantKind
			if e.Scope != "" {
				g += ", scope " + e.Scope
			}
			g += ")"
		}
		parts = append(parts, g)
	}
	if e.Project != "" {
		add("project %s", printable(e.Project))
	}
	if e.Subject != "" && e.Command == "" && e.Event != audit.Allowed {
		add("%s", printable(e.Subject))
	}
	if e.By != nil {
		parts = append(parts, "by "+describeActor(*e.By))
	}
	if e.Reason != "" {
		add("%s", printable(e.Reason))
	}
	if e.Repeated > 0 {
		add("%d more like it in the minute before, not listed", e.Repeated)
	}
	if e.Event == audit.Summary {
		parts = append(parts, describeCounts(e))
	}
	return strings.Join(parts, "; ")
}

// describeCounts says what a summary counts.
func describeCounts(e audit.Entry) string {
	var rows []string
	total := 0
	for _, c := range e.Counts {
		total += c.N
		if c.Others {
			rows = append(rows, fmt.Sprintf("%d of other callers", c.N))
			continue
		}
		rows = append(rows, fmt.Sprintf("%d %s %s from client %s in tab %s", c.N, printable(c.Event), dash(printable(c.Tool)),
			dash(printable(c.Client)), dash(printable(c.Tab))))
	}
	return fmt.Sprintf("%d lines left out since %s: %s", total, e.Since.Local().Format("2006-01-02 15:04:05"), strings.Join(rows, ", "))
}

// describeActor names who answered or revoked.
func describeActor(a audit.Actor) string {
	if a.Via != "" && a.PID == 0 {
		return a.Via
	}
	s := "pid " + strconv.Itoa(a.PID)
	if a.Command != "" {
		s += " (" + printable(a.Command) + ")"
	}
	if a.Terminal != "" {
		s += " on " + a.Terminal
	}
	if a.For != nil {
		s += ", for " + describeActor(*a.For)
	}
	return s
}

// sinceLayouts are the times --since takes, read in local time.
var sinceLayouts = []string{"2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02"}

// parseSince reads --since: empty (everything), a positive duration ago
// (90m, 2h; 3d for days), an RFC 3339 time, a local date or date and time,
// or a local time of day today (14:05).
func parseSince(v string, now time.Time) (time.Time, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return time.Time{}, nil
	}
	bad := func(why string) error {
		return fmt.Errorf("--since %q: %s; want a duration such as 90m, 2h or 3d, or a time such as 2026-11-30, "+
			"\"2026-11-30 14:05\", 14:05 or 2026-11-30T14:05:00Z", v, why)
	}
	if n, ok := strings.CutSuffix(v, "d"); ok && n != "" && !strings.ContainsAny(n, "hmsuµn.") {
		days, err := strconv.Atoi(n)
		if err != nil || days <= 0 || days > 100*365 {
			return time.Time{}, bad("not a number of days from 1 to 36500")
		}
		return now.AddDate(0, 0, -days), nil
	}
	if d, err := time.ParseDuration(v); err == nil {
		if d <= 0 {
			return time.Time{}, bad("the duration must be positive")
		}
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	for _, layout := range sinceLayouts {
		if t, err := time.ParseInLocation(layout, v, now.Location()); err == nil {
			return t, nil
		}
	}
	for _, layout := range []string{"15:04", "15:04:05"} {
		if t, err := time.ParseInLocation(layout, v, now.Location()); err == nil {
			y, m, d := now.Date()
			return time.Date(y, m, d, t.Hour(), t.Minute(), t.Second(), 0, now.Location()), nil
		}
	}
	return time.Time{}, bad("not a duration or a time")
}
