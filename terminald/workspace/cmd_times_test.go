package workspace

import (
	"testing"
	"time"
)

// TestCommandTimesAcrossRestart: the times the log saves come back for
// the same commands after a replay rebuilt them with the replay's time;
// a command the save does not hold gets no times (lost, not made up).
func TestCommandTimesAcrossRestart(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)
	replay := t0.Add(time.Hour)
	cmd := func(text string, start, end time.Time) *Command {
		return &Command{Text: text, StartedAt: start, FinishedAt: end, Finished: !end.IsZero()}
	}
	tests := []struct {
		name              string
		last, cur         *Command // as the old terminald had them
		rLast, rCur       *Command // as the replay rebuilt them
		wantLast          [2]time.Time
		wantCur           time.Time
		lastLost, curLost bool
	}{
		{name: "finished and running", last: cmd("make", t0, t0.Add(5*time.Second)), cur: cmd("sleep 100", t0.Add(time.Minute), time.Time{}),
			rLast: cmd("make", replay, replay), rCur: cmd("sleep 100", replay, time.Time{}),
			wantLast: [2]time.Time{t0, t0.Add(5 * time.Second)}, wantCur: t0.Add(time.Minute)},
		{name: "finished after the save: start known, end not", cur: cmd("sleep 1", t0, time.Time{}),
			rLast: cmd("sleep 1", replay, replay), wantLast: [2]time.Time{t0, {}}, lastLost: true},
		{name: "ran after the save: nothing known", last: cmd("make", t0, t0.Add(time.Second)),
			rLast: cmd("go test", replay, replay), lastLost: true},
		{name: "the same command twice: the newest saved is taken", last: cmd("make", t0, t0.Add(time.Second)), cur: cmd("make", t0.Add(time.Minute), time.Time{}),
			rLast: cmd("make", replay, replay), rCur: cmd("make", replay, time.Time{}),
			wantLast: [2]time.Time{t0, t0.Add(time.Second)}, wantCur: t0.Add(time.Minute)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old := &commandLog{last: tc.last, cur: tc.cur}
			saved := old.savedTimes()
			l := &commandLog{last: tc.rLast, cur: tc.rCur}
			l.adoptTimes(saved)
			if c := l.last; c != nil && (!c.StartedAt.Equal(tc.wantLast[0]) || !c.FinishedAt.Equal(tc.wantLast[1]) || c.TimesLost != tc.lastLost) {
				t.Errorf("last: started %v, finished %v, lost %v; want %v, %v, %v", c.StartedAt, c.FinishedAt, c.TimesLost, tc.wantLast[0], tc.wantLast[1], tc.lastLost)
			}
			if c := l.cur; c != nil && (!c.StartedAt.Equal(tc.wantCur) || c.TimesLost != tc.curLost) {
				t.Errorf("running: started %v, lost %v; want %v, %v", c.StartedAt, c.TimesLost, tc.wantCur, tc.curLost)
			}
		})
	}
}
