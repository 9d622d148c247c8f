package workspace

import "time"

// Command times across terminald restarts.
//
// A new terminald rebuilds each tab's screen by replaying the output its
// holder kept, and the shell integration marks in it rebuild the command
// log — but a replayed mark says nothing of when it came: every command
// would seem to have run at the replay, "in 0 ms". So the state blob the
// holder keeps (restore.go) carries the times of the commands the log
// holds, and a restored tab takes them back for the same commands.

// savedCommand is one command's times in the state blob.
type savedCommand struct {
	Text     string    `json:"text"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished,omitzero"` // zero while it runs
}

// savedTimes returns the times of the commands the log holds, the last
// finished one first, then the running one.
func (l *commandLog) savedTimes() []savedCommand {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []savedCommand
	for _, c := range []*Command{l.last, l.cur} {
		if c != nil && !c.StartedAt.IsZero() {
			s := savedCommand{Text: c.Text, Started: c.StartedAt}
			if c.Finished {
				s.Finished = c.FinishedAt
			}
			out = append(out, s)
		}
	}
	return out
}

// adoptTimes gives the commands the replay rebuilt their times from
// saved. A command the replay rebuilt but saved does not hold (one that
// ran after the last save, before a crash) gets no times at all rather
// than the replay's: its times are unknown, and say so (TimesLost). A
// finish saved does not know either is unknown.
func (l *commandLog) adoptTimes(saved []savedCommand) {
	l.mu.Lock()
	defer l.mu.Unlock()
	used := make([]bool, len(saved))
	for _, c := range []*Command{l.cur, l.last} { // newest first
		if c == nil {
			continue
		}
		c.StartedAt, c.FinishedAt, c.TimesLost = time.Time{}, time.Time{}, true
		for i := len(saved) - 1; i >= 0; i-- {
			if used[i] || saved[i].Text != c.Text || !c.Finished && !saved[i].Finished.IsZero() {
				continue
			}
			used[i] = true
			c.StartedAt, c.TimesLost = saved[i].Started, false
			if c.Finished {
				c.FinishedAt = saved[i].Finished
				c.TimesLost = c.FinishedAt.IsZero()
			}
			break
		}
	}
}
