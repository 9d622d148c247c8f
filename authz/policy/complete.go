package policy

import (
	"fmt"
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

// openers and closers are the words that open and close compound
// commands where a command starts (bash and zsh: fi, esac, done; fish:
// end).
var (
	openers = map[string]bool{"if": true, "case": true, "for": true, "while": true, "until": true, "select": true,
		"begin": true, "switch": true}
	closers = map[string]bool{"fi": true, "esac": true, "done": true, "end": true}
)

// incomplete says why cmd would leave the shell waiting for more, or "".
func incomplete(cmd string) string {
	var (
		word      strings.Builder
		cmdPos    = true // the next word starts a command
		depth     int    // ( and { groups open
		compounds int    // compound commands open
		lastOp    string // the operator the line ended with, if it did
	)
	endWord := func() {
		if word.Len() == 0 {
			return
		}
		w := word.String()
		word.Reset()
		lastOp = ""
		switch {
		case cmdPos && openers[w]:
			compounds++
		case cmdPos && closers[w]:
			compounds--
		case cmdPos && w == "{":
			depth++
		case cmdPos && w == "}":
			depth--
		}
		// After these, a command starts again.
		cmdPos = w == "then" || w == "do" || w == "else" || w == "elif" || w == "{" || w == "!" || w == "time" ||
			(cmdPos && (openers[w] && w != "for" && w != "case" && w != "select" && w != "switch"))
	}
	for i := 0; i < len(cmd); i++ {
		c := cmd[i]
		switch c {
		case '\\':
			if i+1 == len(cmd) {
				return "it ends with a backslash, which continues the line"
			}
			word.WriteByte(c)
			word.WriteByte(cmd[i+1])
			i++
		case '\'':
			j := strings.IndexByte(cmd[i+1:], '\'')
			if i > 0 && cmd[i-1] == '$' { // $'…' takes \' inside
				j = closingQuote(cmd[i+1:], '\'')
			}
			if j < 0 {
				return "it ends inside a single-quoted string"
			}
			word.WriteString(cmd[i : i+j+2])
			i += j + 1
		case '"', '`':
			j := closingQuote(cmd[i+1:], c)
			if j < 0 {
				return "it ends inside a " + map[byte]string{'"': "double-quoted string", '`': "backquoted command"}[c]
			}
			word.WriteString(cmd[i : i+j+2])
			i += j + 1
		case ' ', '\t':
			endWord()
		case ';', '&', '|', '<', '>', '(', ')':
			if c == '(' && word.Len() > 0 && !strings.HasSuffix(word.String(), "$") && !strings.HasSuffix(word.String(), "=") {
				word.WriteByte(c) // a glob or a zsh qualifier inside a word
				depth++
				continue
			}
			endWord()
			op := string(c)
			if i+1 < len(cmd) && (cmd[i+1] == c || (c == '|' && cmd[i+1] == '&') || (c == '>' && cmd[i+1] == '|')) {
				op += string(cmd[i+1])
				i++
			}
			if op == "<<" {
				if i+1 < len(cmd) && cmd[i+1] == '<' {
					i++ // <<<, a here-string, is one line
					break
				}
				return "it starts a here-document (<<), which reads the lines that follow"
			}
			switch op {
			case "(":
				depth++
			case ")":
				depth--
			case "((":
				depth += 2
			case "))":
				depth -= 2
			}
			lastOp = op
			cmdPos = op != "<" && op != ">" && op != ">>" && op != ">|" && op != ")" && op != "))"
		case '#':
			if word.Len() == 0 {
				i = len(cmd) // a comment to the end of the line
				break
			}
			word.WriteByte(c)
		default:
			word.WriteByte(c)
		}
	}
	endWord()
	switch {
	case lastOp == "|" || lastOp == "||" || lastOp == "&&" || lastOp == "|&":
		return "it ends with " + lastOp + ", which continues the command on the next line"
	case depth > 0:
		return "a ( or { group it opens is not closed"
	case compounds > 0:
		return "a compound command it opens (if, case, for, while, until, select, begin or switch) is not closed on the line"
	}
	return ""
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
