package audit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/phantom-dev/phantom/internal/testenv"
)

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// readAll reads every file of the log at path, oldest first.
func readAll(t *testing.T, path string) []Entry {
	t.Helper()
	var out []Entry
	for _, name := range Files(path) {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		es, bad, err := Read(f, time.Time{})
		f.Close()
		if err != nil || len(bad) > 0 {
			t.Fatalf("%s: %v %v", name, err, bad)
		}
		out = append(out, es...)
	}
	return out
}

// TestCommitAndRecord: lines land in order, as JSON, in a 0600 file, and
// Commit returns once its line is there.
func TestCommitAndRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", FileName)
	l := Open(path, Options{Now: func() time.Time { return t0 }})
	l.Record(Entry{Event: SheetRaised, Sheet: "s1", Client: "claude"})
	if err := l.Commit(context.Background(), Entry{Event: Allowed, Tool: "run_command", Command: "echo \x1b]0;hi\x07 ok", Target: "t2"}); err != nil {
		t.Fatal(err)
	}
	got := readAll(t, path)
	if len(got) != 2 || got[0].Event != SheetRaised || got[1].Command != "echo \x1b]0;hi\x07 ok" || !got[1].Time.Equal(t0) {
		t.Fatalf("entries = %+v", got)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("log file: %v %v, want mode 0600", fi, err)
	}
	l.Close()
	if b, _ := os.ReadFile(path); bytes.Contains(b, []byte("\x1b")) {
		t.Error("a raw escape reached the file: JSON must escape it")
	}
}

// TestRotation: the log is rotated by size and keeps Keep old files,
// dropping the oldest; every file holds whole lines.
func TestRotation(t *testing.T) {
	tests := []struct {
		name      string
		keep      int
		lines     int
		wantFiles int
	}{
		{"one rotation", 3, 6, 2},
		{"oldest dropped", 2, 40, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), FileName)
			l := Open(path, Options{MaxSize: 600, Keep: tt.keep, Now: func() time.Time { return t0 }})
			for i := range tt.lines {
				if err := l.Commit(context.Background(), Entry{Event: Allowed, Grant: fmt.Sprintf("g%03d", i),
					Subject: strings.Repeat("x", 100)}); err != nil {
					t.Fatal(err)
				}
			}
			l.Close()
			files := Files(path)
			if len(files) != tt.wantFiles {
				t.Fatalf("files = %v, want %d", files, tt.wantFiles)
			}
			for _, f := range files {
				if fi, _ := os.Stat(f); fi.Size() > 600 {
					t.Errorf("%s is %d bytes, more than the bound", f, fi.Size())
				}
			}
			got := readAll(t, path)
			last := got[len(got)-1].Grant
			if last != fmt.Sprintf("g%03d", tt.lines-1) {
				t.Errorf("newest entry %s, want the last written", last)
			}
			for i := 1; i < len(got); i++ {
				if got[i].Grant <= got[i-1].Grant {
					t.Fatalf("entries out of order across files: %s after %s", got[i].Grant, got[i-1].Grant)
				}
			}
		})
	}
}

// TestUnwritable: when the log cannot be written, Commit fails (so the
// caller does not act), Record does not block, Status says why and counts
// the lost lines; once the log can be written again, all is well.
func TestUnwritable(t *testing.T) {
	tests := []struct {
		name  string
		spoil func(t *testing.T, path string)
		fix   func(t *testing.T, path string)
		want  string
	}{
		{"a directory in its place", func(t *testing.T, path string) { os.Mkdir(path, 0o700) },
			func(t *testing.T, path string) { os.Remove(path) }, "open audit log"},
		{"a symbolic link in its place", func(t *testing.T, path string) { os.Symlink(path+".elsewhere", path) },
			func(t *testing.T, path string) { os.Remove(path) }, "symbolic link"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), FileName)
			tt.spoil(t, path)
			l := Open(path, Options{})
			defer l.Close()
			l.Record(Entry{Event: SheetRaised})
			err := l.Commit(context.Background(), Entry{Event: Allowed, Command: "rm -rf build"})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Commit = %v, want an error saying %q", err, tt.want)
			}
			st := l.Status()
			if st.Problem == nil || st.FailingSince.IsZero() || st.Lost != 2 {
				t.Errorf("Status = %+v, want the problem and 2 lost lines", st)
			}
			tt.fix(t, path)
			if err := l.Commit(context.Background(), Entry{Event: Allowed}); err != nil {
				t.Fatalf("Commit after the fix: %v", err)
			}
			if st := l.Status(); st.Problem != nil || st.Lost != 2 {
				t.Errorf("Status after the fix = %+v", st)
			}
		})
	}
}

// TestStuckWriterNeverBlocks: with the writer stuck (its file is a FIFO
// nobody reads, so opening it hangs), Record returns at once and drops
// what does not fit, and Commit gives up instead of waiting for ever.
func TestStuckWriterNeverBlocks(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	l := Open(path, Options{Queue: 2, CommitTimeout: 50 * time.Millisecond})
	for range 10 {
		l.Record(Entry{Event: Allowed})
	}
	err := l.Commit(context.Background(), Entry{Event: Allowed, Command: "make"})
	if err == nil {
		t.Fatal("Commit succeeded with the writer stuck")
	}
	if st := l.Status(); st.Lost == 0 || st.Problem == nil {
		t.Errorf("Status = %+v, want lost lines and a problem", st)
	}
	// Unstick the writer: a reader on the FIFO lets the open finish.
	r, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	testenv.Eventually(t, "the writer to drain", func() (bool, string) {
		return len(l.ch) == 0, fmt.Sprint(len(l.ch))
	})
	l.Close()
}

// TestRead: bad lines are skipped and reported, good ones kept, since
// filters.
func TestRead(t *testing.T) {
	good := func(ts time.Time, ev string) string {
		return fmt.Sprintf(`{"time":%q,"event":%q}`, ts.Format(time.RFC3339Nano), ev)
	}
	tests := []struct {
		name    string
		input   string
		since   time.Time
		want    []string
		badRows []int
	}{
		{"empty", "", time.Time{}, nil, nil},
		{"two", good(t0, "a") + "\n" + good(t0, "b") + "\n", time.Time{}, []string{"a", "b"}, nil},
		{"no final newline", good(t0, "a"), time.Time{}, []string{"a"}, nil},
		{"cut short", good(t0, "a") + "\n" + `{"time":"2026-11-30T12:00:00Z","ev` + "\n" + good(t0, "c") + "\n",
			time.Time{}, []string{"a", "c"}, []int{2}},
		{"not an object", "[1,2]\nnull\n" + good(t0, "a") + "\n", time.Time{}, []string{"a"}, []int{1, 2}},
		{"no event", `{"time":"2026-11-30T12:00:00Z"}` + "\n", time.Time{}, nil, []int{1}},
		{"blank lines", "\n\n" + good(t0, "a") + "\n\n", time.Time{}, []string{"a"}, nil},
		{"since", good(t0, "old") + "\n" + good(t0.Add(time.Hour), "new") + "\n", t0.Add(time.Minute), []string{"new"}, nil},
		{"too long", `{"x":"` + strings.Repeat("a", maxLine) + `"}` + "\n" + good(t0, "a") + "\n", time.Time{}, []string{"a"}, []int{1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			es, bad, err := Read(strings.NewReader(tt.input), tt.since)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range es {
				got = append(got, e.Event)
			}
			var rows []int
			for _, b := range bad {
				rows = append(rows, b.Line)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) || fmt.Sprint(rows) != fmt.Sprint(tt.badRows) {
				t.Errorf("Read = %v, bad rows %v; want %v, %v", got, rows, tt.want, tt.badRows)
			}
		})
	}
}

// errReader fails after its content.
type errReader struct{ s *strings.Reader }

func (e errReader) Read(p []byte) (int, error) {
	n, err := e.s.Read(p)
	if err != nil {
		return n, errors.New("disk error")
	}
	return n, nil
}

func TestReadError(t *testing.T) {
	if _, _, err := Read(errReader{strings.NewReader("{}\n")}, time.Time{}); err == nil {
		t.Error("a failing reader read without error")
	}
}

// FuzzRead: any input reads without panicking, and every entry it keeps
// has a time and an event; a line written by the log reads back the same.
func FuzzRead(f *testing.F) {
	f.Add([]byte(`{"time":"2026-11-30T12:00:00Z","event":"allowed","command":"ls"}` + "\n"))
	f.Add([]byte("{\n}\n[]\n\"x\"\n"))
	f.Add([]byte(`{"time":"2026-11-30T12:00:00Z","event":"x","by":{"pid":-1}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		es, _, err := Read(bytes.NewReader(b), time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			if e.Event == "" || e.Time.IsZero() {
				t.Fatalf("kept an entry without time or event: %+v", e)
			}
		}
	})
}

// FuzzEncodeParse: whatever an agent puts in a command or a client name,
// the line the log writes is one line and reads back unchanged.
func FuzzEncodeParse(f *testing.F) {
	f.Add("claude", "make test\n; echo \x1b[31m", "t1")
	f.Add("", "\u202e\x00", "")
	f.Fuzz(func(t *testing.T, client, command, target string) {
		l := &Log{path: "x", o: Options{Now: func() time.Time { return t0 }}}
		line, err := l.encode(Entry{Event: Allowed, Client: client, Command: command, Target: target})
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Count(line, []byte("\n")) != 1 || line[len(line)-1] != '\n' {
			t.Fatalf("encoded entry is not one line: %q", line)
		}
		e, err := ParseLine(line)
		if err != nil {
			t.Fatal(err)
		}
		// JSON keeps valid UTF-8; each invalid byte becomes U+FFFD.
		if perByte(client) != e.Client || perByte(command) != e.Command {
			t.Errorf("read back %q %q, want %q %q", e.Client, e.Command, client, command)
		}
	})
}

// perByte replaces each byte of s that is not valid UTF-8 with U+FFFD, as
// encoding/json does.
func perByte(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		b.WriteRune(r) // RuneError is U+FFFD
		i += n
	}
	return b.String()
}
