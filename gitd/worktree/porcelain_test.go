package worktree

import (
	"reflect"
	"strings"
	"testing"
)

// TestParseWorktreeList covers every field git writes, odd bytes in paths
// and reasons, and malformed input.
func TestParseWorktreeList(t *testing.T) {
	z := func(fields ...string) string { return strings.Join(fields, "\x00") + "\x00" }
	tests := []struct {
		name    string
		in      string
		want    []Entry
		wantErr string
	}{
		{name: "empty", in: "", want: nil},
		{
			name: "main and friends",
			in: z("worktree /r", "HEAD abc", "branch refs/heads/main", "") +
				z("worktree /r.worktrees/x y", "HEAD def", "detached", "locked", "") +
				z("worktree /r.worktrees/ü\nnew", "HEAD 123", "branch refs/heads/b", "locked why me", "prunable gitdir file points to non-existent location", ""),
			want: []Entry{
				{Path: "/r", Head: "abc", Branch: "refs/heads/main"},
				{Path: "/r.worktrees/x y", Head: "def", Detached: true, Locked: true},
				{Path: "/r.worktrees/ü\nnew", Head: "123", Branch: "refs/heads/b", Locked: true, LockReason: "why me",
					Prunable: true, PrunableReason: "gitdir file points to non-existent location"},
			},
		},
		{name: "bare", in: z("worktree /srv/r.git", "bare", ""), want: []Entry{{Path: "/srv/r.git", Bare: true}}},
		{name: "unknown key skipped", in: z("worktree /r", "future thing", "HEAD a", ""), want: []Entry{{Path: "/r", Head: "a"}}},
		{name: "no NUL", in: "worktree /r", wantErr: "not NUL-terminated"},
		{name: "unterminated record", in: z("worktree /r", "HEAD a"), wantErr: "not terminated"},
		{name: "two paths", in: z("worktree /r", "worktree /s", ""), wantErr: "not terminated before"},
		{name: "bad start", in: z("HEAD a", ""), wantErr: "want \"worktree <path>\""},
		{name: "empty record", in: "\x00", wantErr: "empty record"},
		{name: "empty path", in: z("worktree ", ""), wantErr: "want \"worktree <path>\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseWorktreeList([]byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseWorktreeList = %+v, %v; want error containing %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
			if again, err := ParseWorktreeList(FormatWorktreeList(got)); err != nil || !reflect.DeepEqual(again, got) {
				t.Errorf("round trip: %+v, %v", again, err)
			}
		})
	}
}

// FuzzParseWorktreeList checks that the parser never panics and that what
// it accepts survives formatting and parsing again unchanged.
func FuzzParseWorktreeList(f *testing.F) {
	f.Add([]byte("worktree /r\x00HEAD abc\x00branch refs/heads/main\x00\x00"))
	f.Add([]byte("worktree /a b\x00detached\x00locked x\x00prunable gone\x00\x00worktree /c\x00bare\x00\x00"))
	f.Add([]byte("worktree /r\x00"))
	f.Add([]byte("\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := ParseWorktreeList(b)
		if err != nil {
			return
		}
		again, err := ParseWorktreeList(FormatWorktreeList(got))
		if err != nil {
			t.Fatalf("formatted output does not parse: %v", err)
		}
		if len(again) != len(got) {
			t.Fatalf("round trip changed the count: %d → %d", len(got), len(again))
		}
		for i := range got {
			g, a := got[i], again[i]
			// Fields that cannot be written back byte for byte: a value with
			// a NUL cannot occur (NUL ends fields), so equality is expected.
			if !reflect.DeepEqual(g, a) {
				t.Fatalf("round trip changed entry %d:\n%+v\n%+v", i, g, a)
			}
		}
	})
}
