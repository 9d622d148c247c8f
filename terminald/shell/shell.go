// Package shell starts bash, zsh and fish with Phantom's shell integration:
// OSC 133 prompt marks (133;A prompt start, 133;B prompt end, 133;C command
// output start, 133;D;<status> command end) and OSC 7 working-directory
// reports (ESC ] 7 ; file://<host>/<percent-encoded cwd> BEL), all terminated
// by BEL.
//
// The integration is injected the way Ghostty and kitty do it, without
// touching the user's rc files, so that it works for every user at once, needs
// no setup, and cannot be left behind in a dotfile:
//
//   - bash is started as "bash --posix" with ENV set to Phantom's script. An
//     interactive POSIX-mode bash reads only $ENV at startup. The script leaves
//     POSIX mode, restores ENV and bash's default HISTFILE, sources the startup
//     files bash would normally have read (/etc/bash.bashrc and ~/.bashrc, or
//     for a login shell /etc/profile and the first of ~/.bash_profile,
//     ~/.bash_login, ~/.profile), and then puts a function before and one
//     after the user's PROMPT_COMMAND (scalar or bash 5.1 array), which emit
//     133;D and OSC 7 and wrap PS1 in 133;A ... 133;B, and appends 133;C to
//     PS0. The exit status the user's PROMPT_COMMAND and PS1 see is kept.
//   - zsh is started with ZDOTDIR set to Phantom's directory, whose .zshenv
//     restores the user's ZDOTDIR (or unsets it) and sources the user's
//     .zshenv. zsh then reads .zprofile, .zshrc and .zlogin from the restored
//     ZDOTDIR as usual. At the first prompt, after all of those, the hooks are
//     put around the user's: a precmd hook first (133;D, OSC 7), one last
//     (133;A), a preexec hook (133;C), and a zle-line-init widget, chained
//     with add-zle-hook-widget, for 133;B, so PS1 is never edited and themes
//     that rebuild it keep their marks.
//   - fish is started with Phantom's directory first in XDG_DATA_DIRS, so fish
//     sources fish/vendor_conf.d/phantom.fish from it. The script restores
//     XDG_DATA_DIRS and emits the marks from fish events (fish_prompt: OSC 7
//     and 133;A; fish_preexec: 133;C; fish_postexec: 133;D), and wraps the
//     user's fish_prompt, re-wrapping it if it is redefined, to end with 133;B.
//
// Known limits: zsh prints its PROMPT_SP filler (a "%" line after output
// without a final newline) before any hook runs, so it lands before 133;D;
// zsh gets no marks if the user's rc assigns precmd_functions wholesale,
// dropping the first-prompt hook that installs them; bash needs 4.4 (PS0) and
// promptvars on; Args are for interactive shells only (with -c, bash would
// stay in POSIX mode and read no startup file).
//
// The original values of the variables used for the injection travel in
// private _PHANTOM_SI_* variables that the scripts unset, so the shell and its
// children see the environment the caller asked for. The scripts are embedded
// in the binary and written by Prepare into a private data directory.
//
// Any other shell gets Kind Other and no integration; the caller then falls
// back to foreground-process detection (TIOCGPGRP on the PTY master).
package shell

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

//go:embed scripts/bash.bash scripts/zshenv.zsh scripts/fish.fish
var scripts embed.FS

// Kind identifies a shell family.
type Kind int

// The shell families Prepare knows.
const (
	// Other is any shell without integration (sh, dash, ksh, nu, ...).
	Other Kind = iota
	// Bash is GNU bash (4.4 or later for the command marks).
	Bash
	// Zsh is zsh.
	Zsh
	// Fish is the fish shell (3.x).
	Fish
)

// String returns the shell family's name: "bash", "zsh", "fish" or "other".
func (k Kind) String() string {
	switch k {
	case Bash:
		return "bash"
	case Zsh:
		return "zsh"
	case Fish:
		return "fish"
	default:
		return "other"
	}
}

// Spec describes how to start a shell with integration.
type Spec struct {
	// Path is the shell executable, as given to Prepare.
	Path string
	// Args are the arguments after argv[0] (for bash "--posix"). The caller
	// may append further options for an interactive shell, such as "-l" for a
	// login shell, or start it with an argv[0] beginning with "-".
	Args []string
	// Env holds the variables to add to, or override in, the environment
	// given to Prepare, as KEY=VALUE. They are private to the injection: the
	// scripts restore or unset them before any user code runs.
	Env []string
	// Kind is the detected shell family; Other means no integration.
	Kind Kind
}

// Layout of dataDir. Each embedded script is written to one path.
const (
	bashScript = "bash/phantom.bash"
	zshDir     = "zsh"
	zshScript  = "zsh/.zshenv"
	fishXDG    = "xdg"
	fishScript = "xdg/fish/vendor_conf.d/phantom.fish"
)

// Detect returns the shell family of shellPath, judged by its base name: a
// leading "-" (login-shell argv[0]) is ignored, and a version suffix such as
// "bash5.2" or "zsh-5.9" is allowed.
func Detect(shellPath string) Kind {
	name := strings.TrimPrefix(filepath.Base(shellPath), "-")
	for _, c := range []struct {
		name string
		kind Kind
	}{{"bash", Bash}, {"zsh", Zsh}, {"fish", Fish}} {
		rest, ok := strings.CutPrefix(name, c.name)
		if ok && strings.Trim(rest, "0123456789.-") == "" {
			return c.kind
		}
	}
	return Other
}

// Prepare returns how to start shellPath (e.g. "/bin/bash", "/usr/bin/zsh",
// "/usr/bin/fish"; the kind is detected by base name, see Detect) with shell
// integration.
//
// dataDir is a private directory for the integration scripts. It is created
// with mode 0700 if missing; an existing one must be owned by the current
// user and is chmod'ed to 0700. The embedded scripts are written into it
// idempotently and atomically (temp file + rename, mode 0600), so concurrent
// calls, also from several processes, are safe and an up-to-date file is not
// rewritten.
//
// env is the environment the shell will receive. It is read (never modified)
// for the user's ENV, ZDOTDIR and XDG_DATA_DIRS, which the scripts restore;
// later entries override earlier ones, as in exec.
//
// An unknown shell gets Kind Other, no Args, no Env and no error.
func Prepare(shellPath, dataDir string, env []string) (Spec, error) {
	if shellPath == "" {
		return Spec{}, errors.New("shell: empty shell path")
	}
	spec := Spec{Path: shellPath, Kind: Detect(shellPath)}
	if spec.Kind == Other {
		return spec, nil
	}
	if dataDir == "" {
		return Spec{}, errors.New("shell: empty data directory")
	}
	dir, err := filepath.Abs(dataDir)
	if err != nil {
		return Spec{}, fmt.Errorf("shell: data directory: %w", err)
	}
	if err := privateDir(dir); err != nil {
		return Spec{}, err
	}
	switch spec.Kind {
	case Bash:
		path := filepath.Join(dir, bashScript)
		if err := install(dir, "scripts/bash.bash", bashScript); err != nil {
			return Spec{}, err
		}
		spec.Args = []string{"--posix"}
		// bash expands $ENV as if in double quotes before reading it.
		spec.Env = []string{
			"ENV=" + bashQuoteENV(path),
			"_PHANTOM_SI_ENV=" + saved(env, "ENV"),
		}
	case Zsh:
		if err := install(dir, "scripts/zshenv.zsh", zshScript); err != nil {
			return Spec{}, err
		}
		spec.Env = []string{
			"ZDOTDIR=" + filepath.Join(dir, zshDir),
			"_PHANTOM_SI_ZDOTDIR=" + saved(env, "ZDOTDIR"),
		}
	case Fish:
		if err := install(dir, "scripts/fish.fish", fishScript); err != nil {
			return Spec{}, err
		}
		// With XDG_DATA_DIRS unset fish uses only its own data directory
		// for vendor files, and it always adds that one; so our directory
		// alone is the exact equivalent of "unset" plus our directory.
		xdg := filepath.Join(dir, fishXDG)
		if v, ok := lookup(env, "XDG_DATA_DIRS"); ok && v != "" {
			xdg += ":" + v
		}
		spec.Env = []string{
			"XDG_DATA_DIRS=" + xdg,
			"_PHANTOM_SI_XDG_DATA_DIRS=" + saved(env, "XDG_DATA_DIRS"),
		}
	}
	return spec, nil
}

// saved encodes the state of env[key] for a script to restore: "+value" if
// it is set (possibly empty), "-" if not.
func saved(env []string, key string) string {
	if v, ok := lookup(env, key); ok {
		return "+" + v
	}
	return "-"
}

// lookup returns the value of the last key=value entry of env.
func lookup(env []string, key string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}

// bashQuoteENV escapes path for bash's expansion of $ENV, which treats the
// value like a double-quoted word (parameter, command and arithmetic
// expansion): a backslash before $, `, " and \ keeps them literal.
func bashQuoteENV(path string) string {
	if !strings.ContainsAny(path, "$`\"\\") {
		return path
	}
	var b strings.Builder
	for _, r := range path {
		if strings.ContainsRune("$`\"\\", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// privateDir makes sure dir exists, is a directory (not a symlink) owned by
// the effective user, and has mode 0700.
func privateDir(dir string) error {
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("shell: %w", err)
		}
		fi, err = os.Lstat(dir)
	}
	if err != nil {
		return fmt.Errorf("shell: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("shell: %s is not a directory", dir)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("shell: %s is owned by uid %d, not by us", dir, st.Uid)
	}
	if fi.Mode().Perm() != 0o700 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("shell: %w", err)
		}
	}
	return nil
}

// install writes the embedded file name to dataDir/rel unless it already
// holds the same bytes with mode 0600. Parent directories under dataDir are
// created with mode 0700. The file is written to a temporary file in the same
// directory and renamed into place, so a shell starting meanwhile reads
// either the old or the new script, never a partial one.
func install(dataDir, name, rel string) error {
	data, err := scripts.ReadFile(name)
	if err != nil {
		return fmt.Errorf("shell: embedded %s: %w", name, err)
	}
	dst := filepath.Join(dataDir, rel)
	if fi, err := os.Lstat(dst); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm() == 0o600 {
		if cur, err := os.ReadFile(dst); err == nil && bytes.Equal(cur, data) {
			return nil
		}
	}
	// Create the parent directories one by one so that each gets 0700
	// whatever the umask.
	parent := dataDir
	for _, part := range strings.Split(filepath.Dir(rel), string(filepath.Separator)) {
		if part == "." {
			continue
		}
		parent = filepath.Join(parent, part)
		if err := os.Mkdir(parent, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("shell: %w", err)
		}
		if err := privateDir(parent); err != nil {
			return err
		}
	}
	tmp, err := os.CreateTemp(parent, ".tmp-"+filepath.Base(rel)+"-*")
	if err != nil {
		return fmt.Errorf("shell: %w", err)
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr, os.Chmod(tmp.Name(), 0o600)); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("shell: writing %s: %w", dst, err)
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("shell: %w", err)
	}
	return nil
}
