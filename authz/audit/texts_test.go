package audit

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLongTextsOnce: a long command or subject is written in full once
// per file, later lines carry its digest, and Read puts it back in every
// entry — across --since, rotation, a file moved aside by hand, and text
// that is not valid UTF-8.
func TestLongTextsOnce(t *testing.T) {
	long := "make test && " + strings.Repeat("x", 8000)
	bad := "echo \xff\xfe " + strings.Repeat("y", 400)
	entries := []Entry{
		{Event: SheetRaised, Sheet: "s1", Subject: "tab t1, command " + long},
		{Event: Withdrawn, Sheet: "s1", Subject: "tab t1, command " + long},
		{Event: Allowed, Command: long, Target: "t1"},
		{Event: Allowed, Command: long, Target: "t1"},
		{Event: Allowed, Command: "ls", Target: "t1"},
		{Event: Allowed, Command: bad, Target: "t1"},
		{Event: Allowed, Command: bad, Target: "t1"},
		// After a rotation, the subject of the first line again in full.
		{Event: Denied, Sheet: "s1", Subject: "tab t1, command " + long},
	}
	tests := []struct {
		name    string
		maxSize int64
		between func(t *testing.T, path string, i int)
		// full is how many times the long command is written in full;
		// files how many files the log ends with.
		full, files int
	}{
		{"one file", 0, nil, 1, 1},
		{"rotated between", 12000, nil, 1, 3},
		{"moved aside by hand", 0, func(t *testing.T, path string, i int) {
			if i == 3 {
				if err := os.Rename(path, path+".aside"); err != nil {
					t.Fatal(err)
				}
			}
		}, 2, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), FileName)
			l := Open(path, Options{MaxSize: tt.maxSize, Now: func() time.Time { return t0 }})
			for i, e := range entries {
				if tt.between != nil {
					tt.between(t, path, i)
				}
				if err := l.Commit(context.Background(), e); err != nil {
					t.Fatal(err)
				}
			}
			l.Close()
			names := append([]string{path + ".aside"}, Files(path)...)
			if _, err := os.Stat(names[0]); err != nil {
				names = names[1:]
			}
			if len(names) != tt.files {
				t.Errorf("files %v, want %d", names, tt.files)
			}
			n := 0
			var got []Entry
			for _, name := range names {
				raw, err := os.ReadFile(name)
				if err != nil {
					t.Fatal(err)
				}
				n += bytes.Count(raw, []byte(`"command":"make test`))
				es, badLines, err := Read(bytes.NewReader(raw), time.Time{})
				if err != nil || len(badLines) > 0 {
					t.Fatalf("%s: %v %v", name, err, badLines)
				}
				got = append(got, es...)
			}
			if n != tt.full {
				t.Errorf("the long command is written in full %d times, want %d", n, tt.full)
			}
			if len(got) != len(entries) {
				t.Fatalf("read %d entries, want %d", len(got), len(entries))
			}
			for i, e := range got {
				want := entries[i]
				if e.Event != want.Event || e.Command != jsonText(want.Command) || e.Subject != want.Subject {
					t.Errorf("entry %d = %s %.40q %.40q, want %s %.40q %.40q", i, e.Event, e.Command, e.Subject, want.Event, want.Command, want.Subject)
				}
				if len(want.Command) >= ReferMin && e.CommandSHA256 != digest(jsonText(want.Command)) {
					t.Errorf("entry %d: command digest %q", i, e.CommandSHA256)
				}
			}
		})
	}
}

// TestReadResolvesBeforeSince: a text written before --since still fills
// in the later lines that refer to it.
func TestReadResolvesBeforeSince(t *testing.T) {
	long := strings.Repeat("z", 1000)
	now := t0
	path := filepath.Join(t.TempDir(), FileName)
	l := Open(path, Options{Now: func() time.Time { return now }})
	l.Record(Entry{Event: Allowed, Command: long})
	l.Close()
	now = t0.Add(time.Hour)
	l = Open(path, Options{Now: func() time.Time { return now }})
	l.Record(Entry{Event: Allowed, Command: long})
	l.Record(Entry{Event: Allowed, Command: long})
	l.Close()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	es, bad, err := Read(f, t0.Add(time.Minute))
	if err != nil || len(bad) > 0 || len(es) != 2 {
		t.Fatalf("Read = %d entries, %v, %v", len(es), bad, err)
	}
	for _, e := range es {
		if e.Command != long {
			t.Errorf("command %.20q…, want the long one", e.Command)
		}
	}
}

// TestAlteredText: a line whose text does not match its digest is
// reported, not believed; a digest whose text the file does not hold
// stays a digest.
func TestAlteredText(t *testing.T) {
	long := strings.Repeat("a", 300)
	sum := digest(long)
	in := `{"time":"2026-11-30T12:00:00Z","event":"allowed","command":"` + strings.Repeat("b", 300) + `","command_sha256":"` + sum + `"}` + "\n" +
		`{"time":"2026-11-30T12:00:01Z","event":"allowed","command_sha256":"` + sum + `"}` + "\n"
	es, bad, err := Read(strings.NewReader(in), time.Time{})
	if err != nil || len(bad) != 1 || bad[0].Line != 1 || !strings.Contains(bad[0].Err.Error(), "altered") {
		t.Fatalf("Read: bad %v, err %v; want line 1 reported as altered", bad, err)
	}
	if len(es) != 1 || es[0].Command != "" || es[0].CommandSHA256 != sum {
		t.Errorf("entries %+v, want the second with its digest and no text", es)
	}
}

// TestLineSize: LineSize bounds the line the log writes.
func TestLineSize(t *testing.T) {
	for _, e := range []Entry{
		{Event: Allowed},
		{Event: Allowed, Command: strings.Repeat("\x01", 9000), Subject: strings.Repeat("é", 5000), Client: "c\x1b"},
		{Event: Summary, Since: t0, Counts: []Count{{Client: "x", Event: TurnedAway, N: 7}, {Others: true, N: 3}}},
	} {
		path := filepath.Join(t.TempDir(), FileName)
		l := Open(path, Options{Now: func() time.Time { return time.Now() }})
		if err := l.Commit(context.Background(), e); err != nil {
			t.Fatal(err)
		}
		l.Close()
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := LineSize(e); int64(got) < fi.Size() {
			t.Errorf("LineSize = %d, the line took %d bytes", got, fi.Size())
		}
	}
}
