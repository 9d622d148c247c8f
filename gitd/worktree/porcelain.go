package worktree

import (
	"bytes"
	"fmt"
	"strings"
)

// Entry is one record of `git worktree list --porcelain -z`.
type Entry struct {
	// Path is the worktree's absolute path.
	Path string
	// Head is the commit HEAD points at; empty in a repository without
	// commits or for a bare entry.
	Head string
	// Branch is the full ref HEAD points at (refs/heads/x); empty when
	// detached or bare.
	Branch string
	// Bare marks a bare repository's entry.
	Bare bool
	// Detached marks a detached HEAD.
	Detached bool
	// Locked marks a locked worktree; LockReason says why, if a reason was
	// given.
	Locked     bool
	LockReason string
	// Prunable marks a worktree git would prune; PrunableReason says why.
	Prunable       bool
	PrunableReason string
}

// ParseWorktreeList reads the output of `git worktree list --porcelain -z`:
// records of NUL-terminated "key[ value]" fields, each record ending with an
// empty field. Unknown keys (from newer gits) are skipped. Values are taken
// byte for byte, so paths with spaces, newlines or any other bytes survive.
func ParseWorktreeList(b []byte) ([]Entry, error) {
	var out []Entry
	var cur *Entry
	for len(b) > 0 {
		i := bytes.IndexByte(b, 0)
		if i < 0 {
			return nil, fmt.Errorf("worktree list: field %q is not NUL-terminated", truncate(string(b)))
		}
		field := string(b[:i])
		b = b[i+1:]
		if field == "" {
			if cur == nil {
				return nil, fmt.Errorf("worktree list: empty record")
			}
			out = append(out, *cur)
			cur = nil
			continue
		}
		key, value, hasValue := strings.Cut(field, " ")
		if cur == nil {
			if key != "worktree" || !hasValue || value == "" {
				return nil, fmt.Errorf("worktree list: record starts with %q, want \"worktree <path>\"", truncate(field))
			}
			cur = &Entry{Path: value}
			continue
		}
		switch key {
		case "worktree":
			return nil, fmt.Errorf("worktree list: record for %q is not terminated before %q", truncate(cur.Path), truncate(field))
		case "HEAD":
			cur.Head = value
		case "branch":
			cur.Branch = value
		case "bare":
			cur.Bare = true
		case "detached":
			cur.Detached = true
		case "locked":
			cur.Locked, cur.LockReason = true, value
		case "prunable":
			cur.Prunable, cur.PrunableReason = true, value
		}
	}
	if cur != nil {
		return nil, fmt.Errorf("worktree list: record for %q is not terminated", truncate(cur.Path))
	}
	return out, nil
}

// FormatWorktreeList writes entries the way `git worktree list --porcelain
// -z` does; ParseWorktreeList reads it back.
func FormatWorktreeList(entries []Entry) []byte {
	var b bytes.Buffer
	field := func(s string) { b.WriteString(s); b.WriteByte(0) }
	for _, e := range entries {
		field("worktree " + e.Path)
		if e.Bare {
			field("bare")
		}
		if e.Head != "" {
			field("HEAD " + e.Head)
		}
		if e.Branch != "" {
			field("branch " + e.Branch)
		}
		if e.Detached {
			field("detached")
		}
		if e.Locked {
			if e.LockReason != "" {
				field("locked " + e.LockReason)
			} else {
				field("locked")
			}
		}
		if e.Prunable {
			if e.PrunableReason != "" {
				field("prunable " + e.PrunableReason)
			} else {
				field("prunable")
			}
		}
		b.WriteByte(0)
	}
	return b.Bytes()
}

func truncate(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
