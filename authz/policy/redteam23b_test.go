package policy

// Red team round 2 for issue 23, item 5 / fix (d): checkComplete refuses a
// command line the shell would hold open. Each line below is typed into a
// real interactive shell in a pseudo-terminal (bash --norc, zsh -f, fish
// --no-config), which says whether it ran the line (primary prompt), holds
// it open for more (continuation prompt / fish's multi-line editor), or
// reads the terminal itself (no prompt at all: the human's next line goes
// to the agent's program). A line a shell holds open that incomplete()
// lets through is a HOLE; a common agent command every shell runs that
// incomplete() refuses is a FALSE POSITIVE.

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
)

// rt23bShellState types setup lines and then line into shell in a
// pseudo-terminal and says what the shell does with line: "ran", "open"
// (waits for more lines) or "reads" (no prompt came back).
func rt23bShellState(t *testing.T, shell string, setup []string, line string) string {
	t.Helper()
	var cmd *exec.Cmd
	switch shell {
	case "bash":
		cmd = exec.Command("bash", "--norc", "--noprofile", "-i")
	case "zsh":
		cmd = exec.Command("zsh", "-f", "-i")
	case "fish":
		// fish holds an incomplete line in its editor: fish -n says so.
		out, _ := exec.Command("fish", "--no-config", "-n", "-c", strings.Join(append(setup, line), "\n")).CombinedOutput()
		s := string(out)
		for _, m := range []string{"Unexpected end of string", "Missing end", "but found end of the input", "found an incomplete"} {
			if strings.Contains(s, m) {
				return "open"
			}
		}
		return "ran"
	}
	if _, err := exec.LookPath(cmd.Path); err != nil {
		t.Skipf("%s not installed", shell)
	}
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "TERM=dumb", "HOME="+cmd.Dir)
	f, err := pty.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait(); f.Close() }()
	var buf bytes.Buffer
	chunks := make(chan []byte, 64)
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := f.Read(b)
			if n > 0 {
				chunks <- append([]byte(nil), b[:n]...)
			}
			if err != nil {
				close(chunks)
				return
			}
		}
	}()
	// waitFor reads until one of marks appears after from; "" on timeout.
	waitFor := func(from int, d time.Duration, marks ...string) (string, int) {
		deadline := time.After(d)
		for {
			for _, m := range marks {
				if i := strings.Index(buf.String()[from:], m); i >= 0 {
					return m, from + i + len(m)
				}
			}
			select {
			case c, ok := <-chunks:
				if !ok {
					return "", from
				}
				buf.Write(c)
			case <-deadline:
				return "", from
			}
		}
	}
	f.Write([]byte("PS1=@P''1@; PS2=@P''2@; PROMPT=$PS1; PROMPT2=$PS2\n"))
	_, pos := waitFor(0, 10*time.Second, "@P1@")
	for _, s := range setup {
		f.Write([]byte(s + "\n"))
		_, pos = waitFor(pos, 10*time.Second, "@P1@")
	}
	f.Write([]byte(line + "\n"))
	switch m, _ := waitFor(pos, 3*time.Second, "@P1@", "@P2@"); m {
	case "@P1@":
		return "ran"
	case "@P2@":
		return "open"
	}
	return "reads"
}

// TestRedTeam23b_ShellOracle — the oracle itself: a plain line runs, a
// trailing backslash holds the line open, in each shell.
func TestRedTeam23b_ShellOracle(t *testing.T) {
	for _, sh := range []string{"bash", "zsh", "fish"} {
		if got := rt23bShellState(t, sh, nil, "echo ok"); got != "ran" {
			t.Errorf("%s after echo ok: %s, want ran", sh, got)
		}
		if got := rt23bShellState(t, sh, nil, `echo ok \`); got != "open" {
			t.Errorf("%s after a trailing backslash: %s, want open", sh, got)
		}
	}
}

// TestRedTeam23b_IncompleteMissesContinuations — was a HOLE; holds now for
// what a lexer can see. Each line leaves a
// real shell waiting for the next line (or reading it itself), and
// incomplete() lets it through, so run_command types it, presses Enter,
// and the next line typed in the tab — the human's — is joined to it.
func TestRedTeam23b_IncompleteMissesContinuations(t *testing.T) {
	for _, tc := range []struct {
		why, shell string
		setup      []string
		line       string
	}{
		{"a case pattern's ) drives the group count below zero; a later ( is not counted", "bash", nil, `case x in x) ;; esac; (echo hi`},
		{"end is a plain command in bash, but counted as a closer", "bash", nil, `end 2>/dev/null; if true; then echo hi`},
		{"fi is a plain command in fish, but counted as a closer", "fish", nil, `fi 2>/dev/null; begin; echo hi`},
		{"a function body's { after f() is not at a command start", "bash", nil, `f() { echo hi`},
		{"function f { : the { is not at a command start", "bash", nil, `function f { echo hi`},
		{"coproc { : the { is not at a command start", "bash", nil, `coproc { echo hi`},
		{"fish's function block is not an opener", "fish", nil, `function f; echo hi`},
		{"zsh's repeat … do is not an opener", "zsh", nil, `repeat 2; do echo hi`},
		{"zsh's foreach … end is not an opener", "zsh", nil, `foreach x (a b)`},
		{"zsh interactive has no comments by default: # it's opens a quote", "zsh", nil, `echo hi # it's`},
		{"fish takes \\' inside single quotes", "fish", nil, `echo 'a\'`},
		{"an unclosed ${", "bash", nil, `echo ${HOME`},
		{"an unclosed [[", "bash", nil, `[[ -n x`},
		// Not a lexer's to see: an alias is terminald's runtime guard's
		// (a line the shell holds open after Enter is cancelled); a
		// command that reads the terminal is a command running, which the
		// sheet showed, and the tab is busy while it reads.
		{"not the lexer's: an alias the agent set earlier expands to an open loop", "bash", []string{`shopt -s expand_aliases; alias zz='for i in 1; do'`}, `zz`},
		{"not the lexer's: the command reads the next line itself", "bash", nil, `read x; eval "$x"`},
		{"not the lexer's: the command reads the terminal itself", "bash", nil, `cat >/dev/null`},
	} {
		t.Run(tc.line, func(t *testing.T) {
			if strings.HasPrefix(tc.why, "not the lexer's") {
				t.Skip(tc.why)
			}
			state := rt23bShellState(t, tc.shell, tc.setup, tc.line)
			why := incomplete(tc.line)
			t.Logf("%s: %s %s; incomplete() = %q", tc.line, tc.shell, state, why)
			if state != "ran" && why == "" {
				t.Errorf("HOLE: %s %s after %q, which incomplete() lets through (%s)", tc.shell, state, tc.line, tc.why)
			}
		})
	}
}

// TestRedTeam23b_CommonAgentCommandsAreComplete — HOLD unless a line is
// listed as FALSE POSITIVE: thirty-odd lines agents type every day; bash
// runs each, so incomplete() must let each through.
func TestRedTeam23b_CommonAgentCommandsAreComplete(t *testing.T) {
	for _, line := range []string{
		`go test ./... -run 'TestX' -count=1`,
		`npm run build -- --watch=false`,
		`git commit -m "msg with 'quotes' and (parens)"`,
		`find . -name '*.go' -exec grep -l foo {} \;`,
		`awk '{print $1}' /dev/null`,
		`echo '{}' | jq '.a | .b'`,
		`sed -e 's/a/b/' /dev/null`,
		`cd /tmp && ls -la | head -20`,
		`grep -rn "func main" --include=*.go . | head -1`,
		`python3 -c 'print("hi")'`,
		`git log --oneline -5 --format='%h %s'`,
		`echo "$(date +%s)"`,
		`for f in *.go; do echo "$f"; done`,
		`if [ -f go.mod ]; then echo mod; fi`,
		`make -j4 test 2>&1 | tail -n 50`,
		`ls *.{go,md} 2>/dev/null`,
		`echo $((1<<4))`,
		`git diff HEAD~1 -- '*.go'`,
		`pytest -k "not slow" -x`,
		`rg 'foo\(bar\)' src/`,
		`git stash push -m "wip (before rebase)"`,
		`printf '%s\n' a b c`,
		`tar -czf /dev/null --exclude='*.o' .`,
		`export PATH="$PWD/bin:$PATH"`,
		`test -d dir || mkdir -p dir`,
		`wc -l $(ls)`,
		`echo 'it'"'"'s'`,
		`case "$x" in a|b) echo ab;; *) echo other;; esac`,
		`[[ $x == a* ]] && echo yes`,
		`time go version`,
		`go test ./... # run all tests`,
		`echo "a\"b" $'c\'d'`,
		`(cd /tmp && ls) | wc -l`,
		`arr=(a b c); echo "${arr[@]}"`,
		`diff <(echo a) <(echo b)`,
		`cat <<<"here string"`,
		`echo ${x:-"}"} done`,
		`echo the end`,
	} {
		t.Run(line, func(t *testing.T) {
			why := incomplete(line)
			if why == "" {
				return
			}
			if state := rt23bShellState(t, "bash", nil, line); state == "ran" {
				t.Errorf("FALSE POSITIVE: bash runs %q, but incomplete() refuses it: %s", line, why)
			} else {
				t.Logf("bash %s after %q; refused: %s", state, line, why)
			}
		})
	}
}
