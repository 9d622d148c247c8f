package shell

import (
	"bytes"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

// osc is one OSC sequence found in the output: its payload (between ESC ]
// and the terminator) and its byte offsets.
type osc struct {
	payload    string
	start, end int
}

// scanOSC returns the OSC sequences (BEL or ST terminated) in b, in order.
func scanOSC(b []byte) []osc {
	var out []osc
	for i := 0; i+1 < len(b); i++ {
		if b[i] != 0x1b || b[i+1] != ']' {
			continue
		}
		for j := i + 2; j < len(b); j++ {
			if b[j] == 0x07 {
				out = append(out, osc{string(b[i+2 : j]), i, j + 1})
				i = j
				break
			}
			if b[j] == 0x1b && j+1 < len(b) && b[j+1] == '\\' {
				out = append(out, osc{string(b[i+2 : j]), i, j + 2})
				i = j + 1
				break
			}
		}
	}
	return out
}

// term is a shell running on a PTY, its output collected in the background.
type term struct {
	cmd   *exec.Cmd
	ptmx  *os.File
	mu    sync.Mutex
	buf   bytes.Buffer
	done  chan struct{}
	start time.Time
}

func startTerm(t testing.TB, spec Spec, dir string, env []string) *term {
	cmd := exec.Command(spec.Path, spec.Args...)
	cmd.Env = append(append([]string(nil), env...), spec.Env...)
	cmd.Dir = dir
	tm := &term{cmd: cmd, done: make(chan struct{}), start: time.Now()}
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 200})
	if err != nil {
		t.Fatalf("start %s: %v", spec.Path, err)
	}
	tm.ptmx = ptmx
	go func() {
		defer close(tm.done)
		b := make([]byte, 4096)
		for {
			n, err := ptmx.Read(b)
			tm.mu.Lock()
			tm.buf.Write(b[:n])
			tm.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(tm.close)
	return tm
}

func (tm *term) close() {
	if tm.cmd.ProcessState == nil {
		tm.cmd.Process.Kill()
		tm.cmd.Wait()
	}
	tm.ptmx.Close()
	<-tm.done
}

func (tm *term) output() []byte {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return bytes.Clone(tm.buf.Bytes())
}

// waitFor polls until cond holds for the output, or fails after timeout.
func (tm *term) waitFor(t testing.TB, what string, timeout time.Duration, cond func([]byte) bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond(tm.output()) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; output:\n%q", what, tm.output())
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func count(b []byte, payload string) int {
	n := 0
	for _, o := range scanOSC(b) {
		if o.payload == payload {
			n++
		}
	}
	return n
}

// waitPrompt waits until n prompts are complete (n 133;B marks seen).
func (tm *term) waitPrompt(t testing.TB, n int) {
	t.Helper()
	tm.waitFor(t, fmt.Sprintf("prompt %d", n), 10*time.Second, func(b []byte) bool { return count(b, "133;B") >= n })
}

// run types the command lines, each after the previous prompt, then exits.
// It returns the output up to the last prompt (before "exit").
func (tm *term) run(t testing.TB, lines []string) []byte {
	t.Helper()
	tm.waitPrompt(t, 1)
	for i, l := range lines {
		if _, err := tm.ptmx.Write([]byte(l + "\r")); err != nil {
			t.Fatal(err)
		}
		tm.waitPrompt(t, i+2)
	}
	out := tm.output()
	tm.ptmx.Write([]byte("exit\r"))
	errc := make(chan error, 1)
	go func() { errc <- tm.cmd.Wait() }()
	select {
	case <-errc:
	case <-time.After(10 * time.Second):
		t.Fatalf("shell did not exit; output:\n%q", tm.output())
	}
	<-tm.done
	return out
}

// command is what one command line produced: the output between its 133;C
// and 133;D marks, its exit status from 133;D, and the command line the
// shell reported with 133;E.
type command struct {
	output string
	status string
	line   string
}

// commands splits the output at the marks and checks their order: every
// command is E;cmdline_url=… C ... D;<status>, every prompt is A ... B, and
// a D is always followed by a prompt.
func commands(t *testing.T, b []byte) []command {
	t.Helper()
	var seq []string
	var cmds []command
	cStart := -1
	var line string
	for _, o := range scanOSC(b) {
		p, ok := strings.CutPrefix(o.payload, "133;")
		if !ok {
			continue
		}
		// A prompt redraw may repeat B; keep the first.
		if len(seq) > 0 && seq[len(seq)-1] == p && p == "B" {
			continue
		}
		seq = append(seq, strings.SplitN(p, ";", 2)[0])
		switch {
		case strings.HasPrefix(p, "E;"):
			enc, ok := strings.CutPrefix(p, "E;cmdline_url=")
			l, err := url.PathUnescape(enc)
			if !ok || err != nil {
				t.Errorf("bad E mark %q", p)
			}
			line = l
		case p == "C":
			cStart = o.end
		case strings.HasPrefix(p, "D;"):
			if cStart < 0 {
				t.Errorf("D without C at %d", o.start)
				continue
			}
			cmds = append(cmds, command{string(b[cStart:o.start]), strings.TrimPrefix(p, "D;"), line})
			cStart, line = -1, ""
		}
	}
	got := strings.Join(seq, " ")
	want := "A B"
	for _, c := range cmds {
		if c.line != "" {
			want += " E"
		}
		want += " C D A B"
	}
	if got != want {
		t.Errorf("mark sequence\n got %s\nwant %s", got, want)
	}
	return cmds
}

var oscCWD = regexp.MustCompile(`^7;file://[^/]*(/.*)$`)

// cwds returns the paths of the OSC 7 reports.
func cwds(b []byte) []string {
	var out []string
	for _, o := range scanOSC(b) {
		if m := oscCWD.FindStringSubmatch(o.payload); m != nil {
			out = append(out, m[1])
		}
	}
	return out
}

type fileState struct {
	data  []byte
	mtime time.Time
}

// writeFiles writes files (relative to root) and returns their state.
func writeFiles(t *testing.T, root string, files map[string]string) map[string]fileState {
	t.Helper()
	st := map[string]fileState{}
	for rel, content := range files {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		old := time.Now().Add(-time.Hour).Truncate(time.Second)
		os.Chtimes(p, old, old)
		st[p] = fileState{[]byte(content), old}
	}
	return st
}

func checkUnchanged(t *testing.T, st map[string]fileState) {
	t.Helper()
	for p, s := range st {
		fi, err := os.Stat(p)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		data, _ := os.ReadFile(p)
		if !bytes.Equal(data, s.data) || !fi.ModTime().Equal(s.mtime) {
			t.Errorf("%s was modified", p)
		}
	}
}

func shellPath(t testing.TB, name string) string {
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s not installed", name)
	}
	return p
}

func baseEnv(home string) []string {
	return []string{
		"HOME=" + home,
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"TERM=xterm-256color",
		"LANG=C.UTF-8",
		"USER=" + os.Getenv("USER"),
	}
}

const marker = "rc-marker-4711"

// rcFiles are per-shell user startup files that set MARKER, install their
// own prompt hook printing [upc:$?] and a prompt showing [ps1:$?].
var rcFiles = map[string]map[string]string{
	"bash": {".bashrc": `MARKER=` + marker + `
PROMPT_COMMAND='builtin printf "[upc:%s]" $?'
PS1='[ps1:$?]\$ '
`},
	"bash-array": {".bashrc": `MARKER=` + marker + `
PROMPT_COMMAND=('builtin printf "[upc:%s]" $?')
PS1='[ps1:$?]\$ '
`},
	// set -u, a PROMPT_COMMAND ending in ";" and a PS1 with \[ \] and $(...).
	"bash-nounset": {".bashrc": `set -u
MARKER=` + marker + `
PROMPT_COMMAND='builtin printf "[upc:%s]" $?;'
PS1='[ps1:$?]\[\e[1m\]$(echo x)\[\e[0m\]\$ '
`},
	"zsh": {".zshrc": `MARKER=` + marker + `
zle-line-init() { print -rn -- "[zli]" }
zle -N zle-line-init
autoload -Uz add-zsh-hook
user_precmd() { print -rn -- "[upc:$?]" }
add-zsh-hook precmd user_precmd
theme_precmd() { PS1='[ps1:%?]%# ' }
add-zsh-hook precmd theme_precmd
`},
	"fish": {".config/fish/config.fish": `set -g MARKER ` + marker + `
function user_prompt_hook --on-event fish_prompt
    printf '[upc:%s]' $status
end
function fish_prompt
    printf '[ps1:%s]> ' $status
end
`},
	// fish_prompt autoloaded from the functions directory.
	"fish-autoload": {
		".config/fish/config.fish": `set -g MARKER ` + marker + `
function user_prompt_hook --on-event fish_prompt
    printf '[upc:%s]' $status
end
`,
		".config/fish/functions/fish_prompt.fish": `function fish_prompt
    printf '[ps1:%s]> ' $status
end
`},
}

// psEnd is how each test prompt ends after its [ps1:$?] (we run as root).
var psEnd = map[string]string{"bash": "# ", "bash-array": "# ", "bash-nounset": "x# ", "zsh": "# ", "fish": "> ", "fish-autoload": "> "}

func TestShells(t *testing.T) {
	for _, name := range []string{"bash", "bash-array", "bash-nounset", "zsh", "fish", "fish-autoload"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			kind, _, _ := strings.Cut(name, "-")
			bin := shellPath(t, kind)
			home := t.TempDir()
			st := writeFiles(t, home, rcFiles[name])
			env := baseEnv(home)
			spec, err := Prepare(bin, filepath.Join(t.TempDir(), "data"), env)
			if err != nil {
				t.Fatal(err)
			}
			if spec.Kind.String() != kind {
				t.Fatalf("kind %v", spec.Kind)
			}
			tm := startTerm(t, spec, home, env)
			odd := filepath.Join(home, "sp ace-é%")
			if err := os.Mkdir(odd, 0o700); err != nil {
				t.Fatal(err)
			}
			lines := []string{"echo $MARKER", "true", "false", "sleep 0.2", `cd "$HOME/sp ace-é%"`, "cd /tmp"}
			out := tm.run(t, lines)
			t.Logf("output: %q", out)
			cmds := commands(t, out)
			wantStatus := []string{"0", "0", "1", "0", "0", "0"}
			if len(cmds) != len(wantStatus) {
				t.Fatalf("got %d commands, want %d", len(cmds), len(wantStatus))
			}
			for i, c := range cmds {
				if c.status != wantStatus[i] {
					t.Errorf("command %d: status %s, want %s", i, c.status, wantStatus[i])
				}
				if c.line != lines[i] {
					t.Errorf("command %d: the shell reported running %q, want %q", i, c.line, lines[i])
				}
			}
			if !strings.Contains(cmds[0].output, marker) {
				t.Errorf("user rc did not run: echo $MARKER printed %q", cmds[0].output)
			}
			// The user's hook and prompt ran at every prompt and saw the
			// right $?: prompt i follows command i-1.
			ps := prompts(out)
			if len(ps) != len(cmds)+1 {
				t.Fatalf("got %d prompts, want %d", len(ps), len(cmds)+1)
			}
			for i, p := range ps {
				st := "0"
				if i > 0 {
					st = cmds[i-1].status
				}
				if !strings.Contains(p, "[upc:"+st+"]") {
					t.Errorf("prompt %d: %q lacks [upc:%s]", i, p, st)
				}
				// The whole PS1, trailing space included, ends the prompt
				// (the user's zle-line-init runs before ours).
				p = strings.TrimSuffix(p, "[zli]")
				if want := "[ps1:" + st + "]" + psEnd[name]; !strings.HasSuffix(p, want) {
					t.Errorf("prompt %d: %q does not end with %q", i, p, want)
				}
			}
			s := string(out)
			if n := strings.Count(stripEsc(s), "[upc:"); n < len(ps) {
				t.Errorf("user prompt hook ran %d times, want >= %d", n, len(ps))
			}
			dirs := cwds(out)
			wantOdd := home + "/sp%20ace-%C3%A9%25"
			if len(dirs) < 2 || dirs[0] != home || dirs[len(dirs)-1] != "/tmp" || dirs[len(dirs)-2] != wantOdd {
				t.Errorf("OSC 7 reports %q, want %s first, then ... %s, /tmp", dirs, home, wantOdd)
			}
			if kind == "zsh" && strings.Count(s, "[zli]") != len(ps) {
				t.Errorf("user's zle-line-init ran %d times, want %d", strings.Count(s, "[zli]"), len(ps))
			}
			checkUnchanged(t, st)
		})
	}
}

// TestBashReportsOnlyWhatItRan: bash reports a command line (133;E) only
// when its history just took it, so that what it reports is what runs:
// after history expansion; nothing for a line the history left out
// (HISTCONTROL, history off), rather than the previous entry.
func TestBashReportsOnlyWhatItRan(t *testing.T) {
	bin := shellPath(t, "bash")
	home := t.TempDir()
	writeFiles(t, home, map[string]string{".bashrc": "HISTCONTROL=ignoreboth\n"})
	env := baseEnv(home)
	spec, err := Prepare(bin, filepath.Join(t.TempDir(), "data"), env)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ line, reported string }{
		{"echo one", "echo one"},
		{" echo spaced", ""}, // ignorespace
		{"echo one", ""},     // ignoredups
		{"echo two", "echo two"},
		{"echo !!", "echo echo two"},
		{"set +o history", "set +o history"},
		{"echo off", ""},
	}
	var lines []string
	for _, tt := range tests {
		lines = append(lines, tt.line)
	}
	cmds := commands(t, startTerm(t, spec, home, env).run(t, lines))
	if len(cmds) != len(tests) {
		t.Fatalf("got %d commands, want %d", len(cmds), len(tests))
	}
	for i, tt := range tests {
		if cmds[i].line != tt.reported {
			t.Errorf("%q: reported %q, want %q", tt.line, cmds[i].line, tt.reported)
		}
	}
}

// prompts returns the text of each prompt: from the end of the previous
// command (or the start) to its 133;B, escape sequences removed.
func prompts(b []byte) []string {
	var out []string
	from := 0
	for _, o := range scanOSC(b) {
		switch {
		case strings.HasPrefix(o.payload, "133;D"):
			from = o.end
		case o.payload == "133;B" && from >= 0:
			out = append(out, stripEsc(string(b[from:o.start])))
			from = -1
		}
	}
	return out
}

var escRe = regexp.MustCompile(`\x1b\][^\x07]*\x07|\x1b[()][0-9A-Za-z]|\x1b\[[0-9;?]*[A-Za-z]|\x1b[=>]|[\x00-\x08\x0e-\x1f]`)

// stripEsc removes escape sequences and control characters (but not CR/LF).
func stripEsc(s string) string { return escRe.ReplaceAllString(s, "") }

// session starts shell bin with integration, HOME=home and the given extra
// environment, runs lines and returns what each command printed (trimmed).
func session(t *testing.T, bin, home string, extraEnv, extraArgs, lines []string) []string {
	t.Helper()
	env := append(baseEnv(home), extraEnv...)
	spec, err := Prepare(bin, filepath.Join(t.TempDir(), "data"), env)
	if err != nil {
		t.Fatal(err)
	}
	spec.Args = append(spec.Args, extraArgs...)
	tm := startTerm(t, spec, home, env)
	out := tm.run(t, lines)
	cmds := commands(t, out)
	if len(cmds) != len(lines) {
		t.Fatalf("got %d commands, want %d; output:\n%q", len(cmds), len(lines), out)
	}
	res := make([]string, len(cmds))
	for i, c := range cmds {
		res[i] = strings.TrimSpace(promptSP.ReplaceAllString(stripEsc(c.output), ""))
	}
	return res
}

// promptSP matches zsh's PROMPT_SP line, which zsh prints before any precmd
// hook and so ends up before 133;D.
var promptSP = regexp.MustCompile(`[%#] +\r \r$`)

func checkOutputs(t *testing.T, got, want []string) {
	t.Helper()
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("command %d printed %q, want %q", i, got[i], want[i])
		}
	}
}

// TestBashStartup checks that bash ends up as a normal interactive bash:
// posix mode off, bash's default HISTFILE (unexported, history loaded from
// it), ENV restored or unset, no private variables left, and the login
// startup files read for a login shell.
func TestBashStartup(t *testing.T) {
	bin := shellPath(t, "bash")
	newHome := func(t *testing.T) string {
		home := t.TempDir()
		writeFiles(t, home, map[string]string{
			".bashrc":       "MARKER=rc\n",
			".bash_profile": "MARKER=profile\n",
			".profile":      "MARKER=dotprofile\n",
			".bash_history": "echo from-history-file\n",
		})
		return home
	}
	lines := []string{
		`shopt -oq posix && echo posix-on || echo posix-off`,
		`echo "$HISTFILE"; declare -p HISTFILE`,
		`history | grep -c '[e]cho from-history-file$'`,
		`echo "[${ENV-unset}]"; env | grep -c _PHANTOM_SI`,
		`echo $MARKER`,
		`shopt -q inherit_errexit && echo ie-on || echo ie-off`,
	}
	t.Run("interactive", func(t *testing.T) {
		home := newHome(t)
		got := session(t, bin, home, nil, nil, lines)
		checkOutputs(t, got, []string{
			"posix-off",
			home + "/.bash_history\r\ndeclare -- HISTFILE=\"" + home + "/.bash_history\"",
			"1",
			"[unset]\r\n0",
			"rc",
			"ie-off",
		})
	})
	t.Run("login", func(t *testing.T) {
		home := newHome(t)
		got := session(t, bin, home, []string{"ENV=/etc/some-env-file"}, []string{"-l"}, lines)
		checkOutputs(t, got, []string{
			"posix-off",
			home + "/.bash_history\r\ndeclare -- HISTFILE=\"" + home + "/.bash_history\"",
			"1",
			"[/etc/some-env-file]\r\n0",
			"profile",
		})
	})
	t.Run("histfile-from-env", func(t *testing.T) {
		home := newHome(t)
		got := session(t, bin, home, []string{"HISTFILE=/tmp/custom-hist"}, nil, lines[1:2])
		checkOutputs(t, got, []string{"/tmp/custom-hist\r\ndeclare -x HISTFILE=\"/tmp/custom-hist\""})
	})
}

// TestBashOptionsLikePlain compares the shell options of the injected bash
// with those of a plain "bash -i" reading the same ~/.bashrc.
func TestBashOptionsLikePlain(t *testing.T) {
	bin := shellPath(t, "bash")
	home := t.TempDir()
	writeFiles(t, home, map[string]string{".bashrc": "shopt -s globstar\n"})
	dump := `{ shopt -p; set +o; echo "$HISTFILE $HISTSIZE"; } > "$HOME/opts-$1"`
	session(t, bin, home, nil, nil, []string{"set -- injected; " + dump})

	cmd := exec.Command(bin, "-i")
	cmd.Env = baseEnv(home)
	cmd.Dir = home
	ptmx, err := pty.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	go func() { _, _ = bytes.NewBuffer(nil).ReadFrom(ptmx) }()
	ptmx.Write([]byte("set -- plain; " + dump + "\rexit\r"))
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatal("plain bash did not exit")
	}
	a, err1 := os.ReadFile(filepath.Join(home, "opts-injected"))
	b, err2 := os.ReadFile(filepath.Join(home, "opts-plain"))
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if !bytes.Equal(a, b) {
		al, bl := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
		for i := range min(len(al), len(bl)) {
			if al[i] != bl[i] {
				t.Errorf("injected %q, plain %q", al[i], bl[i])
			}
		}
	}
}

// TestZshZDOTDIR checks that the user's ZDOTDIR is restored and its files
// read (not $HOME's), and that ZDOTDIR stays unset when it was unset.
func TestZshZDOTDIR(t *testing.T) {
	bin := shellPath(t, "zsh")
	home := t.TempDir()
	zdot := filepath.Join(home, "zdot")
	st := writeFiles(t, home, map[string]string{
		"zdot/.zshenv": "ENVMARK=zdot-env\n",
		"zdot/.zshrc":  "MARKER=zdot-rc\n",
		".zshenv":      "ENVMARK=home-env\n",
		".zshrc":       "MARKER=home-rc\n",
	})
	line := `echo "$ENVMARK $MARKER ${ZDOTDIR-unset} ${+parameters[ZDOTDIR]}"; env | grep -c -e ^_PHANTOM_SI -e ^ZDOTDIR=`
	got := session(t, bin, home, []string{"ZDOTDIR=" + zdot}, nil, []string{line})
	checkOutputs(t, got, []string{"zdot-env zdot-rc " + zdot + " 1\r\n1"})
	got = session(t, bin, home, nil, nil, []string{line})
	checkOutputs(t, got, []string{"home-env home-rc unset 0\r\n0"})
	checkUnchanged(t, st)
}

// TestFishXDGDataDirs checks that XDG_DATA_DIRS is restored for the shell and
// its children, whether it was set or not.
func TestFishXDGDataDirs(t *testing.T) {
	bin := shellPath(t, "fish")
	home := t.TempDir()
	line := `if set -q XDG_DATA_DIRS; echo "[$XDG_DATA_DIRS]"; else; echo unset; end; sh -c 'echo "[${XDG_DATA_DIRS-unset}]"'; env | grep -c _PHANTOM_SI`
	got := session(t, bin, home, nil, nil, []string{line})
	checkOutputs(t, got, []string{"unset\r\n[unset]\r\n0"})
	got = session(t, bin, home, []string{"XDG_DATA_DIRS=/usr/local/share:/usr/share"}, nil, []string{line})
	checkOutputs(t, got, []string{"[/usr/local/share:/usr/share]\r\n[/usr/local/share:/usr/share]\r\n0"})
}

// TestOther checks that an unknown shell gets no integration and still runs.
func TestOther(t *testing.T) {
	for _, path := range []string{"/bin/sh", "/usr/bin/dash", "/bin/ksh", "/usr/bin/nu"} {
		dataDir := filepath.Join(t.TempDir(), "data")
		spec, err := Prepare(path, dataDir, nil)
		if err != nil || spec.Kind != Other || spec.Args != nil || spec.Env != nil || spec.Path != path {
			t.Errorf("Prepare(%s) = %+v, %v", path, spec, err)
		}
		if _, err := os.Stat(dataDir); err == nil {
			t.Errorf("Prepare(%s) created the data directory", path)
		}
	}
	home := t.TempDir()
	spec, _ := Prepare("/bin/sh", t.TempDir(), nil)
	tm := startTerm(t, spec, home, baseEnv(home))
	tm.ptmx.Write([]byte("echo other-$((40+2))\rexit\r"))
	tm.waitFor(t, "sh output", 10*time.Second, func(b []byte) bool { return bytes.Contains(b, []byte("other-42")) })
	if n := len(scanOSC(tm.output())); n != 0 {
		t.Errorf("sh printed %d OSC sequences", n)
	}
}

func TestDetect(t *testing.T) {
	for _, c := range []struct {
		path string
		want Kind
	}{
		{"/bin/bash", Bash}, {"bash", Bash}, {"-bash", Bash}, {"/opt/bin/bash5.2", Bash},
		{"/usr/bin/zsh", Zsh}, {"/usr/local/bin/zsh-5.9", Zsh},
		{"/usr/bin/fish", Fish}, {"fish", Fish},
		{"/bin/sh", Other}, {"/bin/dash", Other}, {"/bin/bashful", Other},
		{"/usr/bin/fisher", Other}, {"/usr/bin/rbash", Other}, {"", Other},
	} {
		if got := Detect(c.path); got != c.want {
			t.Errorf("Detect(%q) = %v, want %v", c.path, got, c.want)
		}
	}
}

// TestPrepareFiles checks the files written: paths, modes, idempotence,
// repair of a modified script, the environment and a relative data dir.
func TestPrepareFiles(t *testing.T) {
	for _, c := range []struct {
		shell, file string
		env         []string
		wantEnv     []string
		args        []string
	}{
		{"/bin/bash", "bash/phantom.bash", nil, []string{"ENV=@/bash/phantom.bash", "_PHANTOM_SI_ENV=-"}, []string{"--posix"}},
		{"/bin/bash", "bash/phantom.bash", []string{"ENV=/x", "ENV=/y"}, []string{"ENV=@/bash/phantom.bash", "_PHANTOM_SI_ENV=+/y"}, []string{"--posix"}},
		{"/usr/bin/zsh", "zsh/.zshenv", nil, []string{"ZDOTDIR=@/zsh", "_PHANTOM_SI_ZDOTDIR=-"}, nil},
		{"/usr/bin/zsh", "zsh/.zshenv", []string{"ZDOTDIR="}, []string{"ZDOTDIR=@/zsh", "_PHANTOM_SI_ZDOTDIR=+"}, nil},
		{"/usr/bin/fish", "xdg/fish/vendor_conf.d/phantom.fish", nil, []string{"XDG_DATA_DIRS=@/xdg", "_PHANTOM_SI_XDG_DATA_DIRS=-"}, nil},
		{"/usr/bin/fish", "xdg/fish/vendor_conf.d/phantom.fish", []string{"XDG_DATA_DIRS=/a:/b"}, []string{"XDG_DATA_DIRS=@/xdg:/a:/b", "_PHANTOM_SI_XDG_DATA_DIRS=+/a:/b"}, nil},
	} {
		t.Run(filepath.Base(c.shell), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			spec, err := Prepare(c.shell, dir, c.env)
			if err != nil {
				t.Fatal(err)
			}
			for i := range c.wantEnv {
				c.wantEnv[i] = strings.Replace(c.wantEnv[i], "@", dir, 1)
			}
			if fmt.Sprint(spec.Env) != fmt.Sprint(c.wantEnv) || fmt.Sprint(spec.Args) != fmt.Sprint(c.args) {
				t.Errorf("spec %+v, want env %q args %q", spec, c.wantEnv, c.args)
			}
			p := filepath.Join(dir, c.file)
			for d := filepath.Dir(p); ; d = filepath.Dir(d) {
				fi, err := os.Stat(d)
				if err != nil || fi.Mode().Perm() != 0o700 {
					t.Errorf("%s: %v %v, want mode 0700", d, fi.Mode(), err)
				}
				if d == dir {
					break
				}
			}
			fi, err := os.Stat(p)
			if err != nil || fi.Mode().Perm() != 0o600 {
				t.Fatalf("%s: %v, want mode 0600", p, err)
			}
			// A second call leaves the file alone.
			old := time.Now().Add(-time.Hour).Truncate(time.Second)
			os.Chtimes(p, old, old)
			if _, err := Prepare(c.shell, dir, c.env); err != nil {
				t.Fatal(err)
			}
			if fi, _ := os.Stat(p); !fi.ModTime().Equal(old) {
				t.Errorf("second Prepare rewrote %s", p)
			}
			// A damaged script is replaced, with no temp files left over.
			os.WriteFile(p, []byte("garbage"), 0o644)
			if _, err := Prepare(c.shell, dir, c.env); err != nil {
				t.Fatal(err)
			}
			data, _ := os.ReadFile(p)
			fi, _ = os.Stat(p)
			if string(data) == "garbage" || fi.Mode().Perm() != 0o600 {
				t.Errorf("damaged script not repaired (mode %v)", fi.Mode())
			}
			ents, _ := os.ReadDir(filepath.Dir(p))
			if len(ents) != 1 {
				t.Errorf("%d entries in %s, want 1", len(ents), filepath.Dir(p))
			}
		})
	}
	t.Run("relative", func(t *testing.T) {
		t.Chdir(t.TempDir())
		spec, err := Prepare("/bin/bash", "rel/data", nil)
		if err != nil {
			t.Fatal(err)
		}
		if v, _ := lookup(spec.Env, "ENV"); !filepath.IsAbs(v) {
			t.Errorf("ENV=%s is not absolute", v)
		}
	})
	t.Run("loose-perms", func(t *testing.T) {
		dir := t.TempDir()
		os.Chmod(dir, 0o777)
		if _, err := Prepare("/usr/bin/zsh", dir, nil); err != nil {
			t.Fatal(err)
		}
		if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
			t.Errorf("data dir mode %v, want 0700", fi.Mode().Perm())
		}
	})
	t.Run("concurrent", func(t *testing.T) {
		dir := t.TempDir()
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() {
				for _, sh := range []string{"/bin/bash", "/usr/bin/zsh", "/usr/bin/fish"} {
					if _, err := Prepare(sh, dir, nil); err != nil {
						t.Error(err)
					}
				}
			})
		}
		wg.Wait()
	})
}

// TestBashOddDataDir checks that a data directory whose path contains
// characters special to bash's expansion of $ENV still works.
func TestBashOddDataDir(t *testing.T) {
	bin := shellPath(t, "bash")
	home := t.TempDir()
	dir := filepath.Join(t.TempDir(), "d $HOME `x` \"q\" 'a' \\b")
	env := baseEnv(home)
	spec, err := Prepare(bin, dir, env)
	if err != nil {
		t.Fatal(err)
	}
	tm := startTerm(t, spec, home, env)
	tm.waitPrompt(t, 1)
}

// BenchmarkFirstPrompt measures the time from starting the shell to its
// first prompt: with integration to the first 133;A mark and to the prompt
// text, without ("plain") to the prompt text, for comparison. HOME holds only
// a minimal rc file setting the prompt.
func BenchmarkFirstPrompt(b *testing.B) {
	rc := map[string]map[string]string{
		"bash": {".bashrc": "PS1='READY> '\n"},
		"zsh":  {".zshrc": "PS1='READY> '\n"},
		"fish": {".config/fish/config.fish": "set -g fish_greeting\nfunction fish_prompt; echo -n 'READY> '; end\n"},
	}
	for _, name := range []string{"bash", "zsh", "fish"} {
		for _, plain := range []bool{false, true} {
			sub := name
			if plain {
				sub += "-plain"
			}
			b.Run(sub, func(b *testing.B) {
				bin := shellPath(b, name)
				home := b.TempDir()
				for rel, content := range rc[name] {
					p := filepath.Join(home, rel)
					os.MkdirAll(filepath.Dir(p), 0o700)
					os.WriteFile(p, []byte(content), 0o600)
				}
				env := baseEnv(home)
				spec, err := Prepare(bin, b.TempDir(), env)
				if err != nil {
					b.Fatal(err)
				}
				if plain {
					spec = Spec{Path: bin, Args: []string{"-i"}}
				}
				var toA, toPrompt time.Duration
				for b.Loop() {
					tm := startTerm(b, spec, home, env)
					if !plain {
						tm.waitFor(b, "133;A", 10*time.Second, func(o []byte) bool { return count(o, "133;A") > 0 })
						toA += time.Since(tm.start)
					}
					tm.waitFor(b, "prompt", 10*time.Second, func(o []byte) bool { return bytes.Contains(o, []byte("READY> ")) })
					toPrompt += time.Since(tm.start)
					tm.close()
				}
				if !plain {
					b.ReportMetric(float64(toA.Microseconds())/float64(b.N)/1000, "ms-to-133A")
				}
				b.ReportMetric(float64(toPrompt.Microseconds())/float64(b.N)/1000, "ms-to-prompt")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}
