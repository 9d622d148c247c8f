package policy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/phantom-dev/phantom/internal/errdefs"
)

// checkComplete refuses a command line the shell would not run as it is
// but hold open for more lines: one that ends inside a quote, with a
// backslash or an operator (|, &&, ||), inside a ( or { group or a compound
// command (if, case, for, while, until, select, begin, switch) that it does
// not close, or that starts a here-document. run_command presses Enter
// once; a shell left waiting at its continuation prompt would join the
// next line anyone types — the human's — to the agent's command, and run
// them as one under the agent's approval.
//
// The lexer is a conservative model of bash, zsh and fish: it may refuse
// a line a shell would take (the agent writes it on one line another
// way), never the reverse for the cases above.
func checkComplete(cmd string) error {
	if why := incomplete(cmd); why != "" {
		return fmt.Errorf("argument command is not a complete command line: %s, so the shell would wait for more lines and "+
			"join the next one typed in the tab (perhaps the human's) to it; write the whole command on the one line, "+
			"closed: %w", why, errdefs.ErrInvalidArgument)
	}
	return nil
}

// openers name the words that open a compound command where a command
// starts, and the words that may close each: bash's and zsh's fi, esac,
// done; fish's end (and zsh's foreach … end). A closer closes only what
// it can close, so a bare "end" in bash or "fi" in fish — plain commands
// there — closes nothing.
var openers = map[string][]string{
	"if": {"fi", "end"}, "case": {"esac"}, "for": {"done", "end"}, "while": {"done", "end"}, "until": {"done"},
	"select": {"done"}, "repeat": {"done"}, "foreach": {"end"}, "begin": {"end"}, "switch": {"end"},
	"function": {"end"}, "[[": {"]]"},
}

// closerOf are the words that close something.
var closerOf = map[string]bool{"fi": true, "esac": true, "done": true, "end": true, "]]": true}

// lexer is one pass of incomplete over a command line.
type lexer struct {
	word   strings.Builder
	quoted bool     // the word holds a quote (so it is no keyword)
	cmdPos bool     // the next word starts a command
	open   []string // what is open, innermost last: openers' words, "(" and "{"
	arith  int      // (( )) open: << there is a shift
	lastOp string   // the operator the line ended with, if it did
}

func (l *lexer) push(w string) { l.open = append(l.open, w) }

// pop closes the innermost open w (one of ws); a closer with nothing of
// its kind open closes nothing (a ) after a case pattern, a plain "end").
func (l *lexer) pop(ws ...string) {
	if n := len(l.open); n > 0 && slices.Contains(ws, l.open[n-1]) {
		l.open = l.open[:n-1]
	}
}

func (l *lexer) endWord() {
	if l.word.Len() == 0 {
		return
	}
	w, quoted := l.word.String(), l.quoted
	l.word.Reset()
	l.quoted, l.lastOp = false, ""
	top := ""
	if n := len(l.open); n > 0 {
		top = l.open[n-1]
	}
	switch {
	case quoted:
	case w == "{":
		// Anywhere, not only where a command starts: f() {, function f {,
		// coproc {. A { after "function NAME" is that function's body.
		if top == "function" {
			l.open = l.open[:len(l.open)-1]
		}
		l.push("{")
	case w == "}":
		l.pop("{")
	case l.cmdPos && openers[w] != nil:
		l.push(w)
	case closerOf[w] && (l.cmdPos || w == "]]"):
		for opener, closers := range openers {
			if top == opener && slices.Contains(closers, w) {
				l.open = l.open[:len(l.open)-1]
				break
			}
		}
	}
	// After these, a command starts again.
	l.cmdPos = !quoted && (w == "then" || w == "do" || w == "else" || w == "elif" || w == "{" || w == "!" || w == "time" ||
		w == "coproc" || (l.cmdPos && (w == "if" || w == "while" || w == "until" || w == "begin")))
}

// incomplete says why cmd would leave the shell waiting for more, or "".
func incomplete(cmd string) string {
	l := &lexer{cmdPos: true}
	for i := 0; i < len(cmd); i++ {
		c := cmd[i]
		switch c {
		case '\\':
			if i+1 == len(cmd) {
				return "it ends with a backslash, which continues the line"
			}
			l.word.WriteByte(c)
			l.word.WriteByte(cmd[i+1])
			l.quoted = true
			i++
		case '\'':
			j := strings.IndexByte(cmd[i+1:], '\'')
			if i > 0 && cmd[i-1] == '$' { // $'…' takes \' inside
				j = closingQuote(cmd[i+1:], '\'')
			}
			if j < 0 {
				return "it ends inside a single-quoted string"
			}
			if j > 0 && cmd[i+j] == '\\' {
				return "a single-quoted string ends in a backslash, which fish reads as an escaped quote that leaves it open"
			}
			l.word.WriteString(cmd[i : i+j+2])
			l.quoted = true
			i += j + 1
		case '"', '`':
			j := closingQuote(cmd[i+1:], c)
			if j < 0 {
				return "it ends inside a " + map[byte]string{'"': "double-quoted string", '`': "backquoted command"}[c]
			}
			if why := incomplete(innerSubst(cmd[i+1 : i+1+j])); c == '"' && why != "" {
				return "inside a double-quoted string, " + why
			}
			l.word.WriteString(cmd[i : i+j+2])
			l.quoted = true
			i += j + 1
		case '$':
			if i+1 < len(cmd) && cmd[i+1] == '{' {
				j := closingBrace(cmd[i+2:])
				if j < 0 {
					return "a ${ it opens is not closed"
				}
				l.word.WriteString(cmd[i : i+j+3])
				i += j + 2
				continue
			}
			l.word.WriteByte(c)
		case ' ', '\t':
			l.endWord()
		case ';', '&', '|', '<', '>', '(', ')':
			if c == '(' && l.word.Len() > 0 && !strings.HasSuffix(l.word.String(), "$") && !strings.HasSuffix(l.word.String(), "=") {
				l.word.WriteByte(c) // a glob or a zsh qualifier inside a word
				l.push("(")
				continue
			}
			l.endWord()
			op := string(c)
			if i+1 < len(cmd) && (cmd[i+1] == c || (c == '|' && cmd[i+1] == '&') || (c == '>' && cmd[i+1] == '|')) {
				op += string(cmd[i+1])
				i++
			}
			switch op {
			case "<<":
				if i+1 < len(cmd) && cmd[i+1] == '<' {
					i++ // <<<, a here-string, is one line
					break
				}
				if l.arith == 0 {
					return "it starts a here-document (<<), which reads the lines that follow"
				}
			case "(":
				l.push("(")
			case ")":
				l.pop("(")
			case "((":
				l.push("((")
				l.arith++
			case "))":
				if n := len(l.open); n > 0 && l.open[n-1] == "((" {
					l.open = l.open[:n-1]
					l.arith--
				} else {
					l.pop("(")
					l.pop("(")
				}
			}
			l.lastOp = op
			l.cmdPos = op != "<" && op != ">" && op != ">>" && op != ">|" && op != ")" && op != "))" && op != "<<"
		default:
			// A comment (#) is lexed like the rest: zsh takes # as a
			// comment only with interactivecomments set, so a quote in
			// it may open a string there.
			l.word.WriteByte(c)
		}
	}
	l.endWord()
	switch {
	case l.lastOp == "|" || l.lastOp == "||" || l.lastOp == "&&" || l.lastOp == "|&":
		return "it ends with " + l.lastOp + ", which continues the command on the next line"
	case len(l.open) > 0:
		switch top := l.open[len(l.open)-1]; top {
		case "(", "((", "{":
			return "a " + top + " group it opens is not closed"
		default:
			return "a compound command it opens (" + top + ") is not closed on the line"
		}
	}
	return ""
}

// innerSubst is what of a double-quoted string's text is lexed as
// commands: its $( … ) substitutions, with the rest blanked out.
func innerSubst(s string) string {
	if !strings.Contains(s, "$(") {
		return ""
	}
	return s[strings.Index(s, "$("):]
}

// closingBrace is the index in s of the } that closes a ${ opened before
// s, skipping quoted strings and escapes; -1 when none does.
func closingBrace(s string) int {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '\'', '"':
			j := closingQuote(s[i+1:], s[i])
			if j < 0 {
				return -1
			}
			i += j + 1
		case '}':
			return i
		}
	}
	return -1
}

// closingQuote is the index in s of the quote q that closes a string
// opened before s, skipping backslash escapes; -1 when none does.
func closingQuote(s string, q byte) int {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case q:
			return i
		}
	}
	return -1
}
