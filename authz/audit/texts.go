package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"
)

// Long texts (a subject, a command) are written in full once per file:
// the first line of a file that holds a text carries it with its SHA-256
// (SubjectSHA256, CommandSHA256), and later lines of the same file carry
// only the digest. Read puts the text back, so every entry a reader gets
// holds its text in full. Each file stands alone: a digest always refers
// to an earlier line of its own file, so rotation never leaves a line
// without its text.
const (
	// ReferMin is the shortest text written by reference; shorter ones
	// cost less than their digest.
	ReferMin = 256
	// referKeep bounds the digests the writer remembers for one file;
	// beyond it, texts are written in full (bounded memory).
	referKeep = 4096
)

// digest is the SHA-256 of a text, in hex.
func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// jsonText is s as a JSON reader reads it back: each byte that is not
// valid UTF-8 becomes U+FFFD, as encoding/json writes it. Digests are of
// this text, so that a reader computes the same.
func jsonText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		b.WriteRune(r)
		i += n
	}
	return b.String()
}

// refer replaces the long texts of e that the current file already holds
// by their digests, and digests the others. It returns the digests
// written in full, for remember once the line is on disk. Called by the
// writer goroutine.
func (l *Log) refer(e Entry) (Entry, []string) {
	var fresh []string
	one := func(text, sum *string) {
		if len(*text) < ReferMin {
			return
		}
		*text = jsonText(*text)
		*sum = digest(*text)
		if _, ok := l.held[*sum]; ok {
			*text = ""
			return
		}
		fresh = append(fresh, *sum)
	}
	one(&e.Subject, &e.SubjectSHA256)
	one(&e.Command, &e.CommandSHA256)
	return e, fresh
}

// remember notes texts the current file now holds. Called by the writer
// goroutine.
func (l *Log) remember(sums []string) {
	for _, s := range sums {
		if len(l.held) >= referKeep {
			return
		}
		l.held[s] = struct{}{}
	}
}

// forgetTexts starts a new file: it holds no text yet. Called by the
// writer goroutine.
func (l *Log) forgetTexts() { clear(l.held) }

// resolver puts back the texts of one file's lines written by reference.
type resolver map[string]string

// resolve fills in e's texts from earlier lines of its file and learns
// the ones it carries. It reports false when a text does not match its
// digest (the line was altered).
func (r resolver) resolve(e *Entry) bool {
	one := func(text, sum *string) bool {
		switch {
		case *sum == "":
			return true
		case *text != "":
			if digest(*text) != *sum {
				return false
			}
			r[*sum] = *text
		default:
			*text = r[*sum] // empty when the file no longer holds it
		}
		return true
	}
	return one(&e.Subject, &e.SubjectSHA256) && one(&e.Command, &e.CommandSHA256)
}

// longestTime is a time as long as any the log writes (RFC 3339 with
// nanoseconds), for LineSize.
var longestTime = time.Date(2026, 12, 31, 23, 59, 59, 999999999, time.UTC)

// LineSize is the most bytes the line of e can take in the log: its
// texts written in full, with their digests, and the longest time stamp.
func LineSize(e Entry) int {
	e.Time = longestTime
	if len(e.Subject) >= ReferMin {
		e.SubjectSHA256 = strings.Repeat("0", sha256.Size*2)
	}
	if len(e.Command) >= ReferMin {
		e.CommandSHA256 = strings.Repeat("0", sha256.Size*2)
	}
	b, err := json.Marshal(e)
	if err != nil {
		return 0
	}
	return len(b) + 1
}
