package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/phantom-dev/phantom/internal/config"
)

// agentHome is what a sandboxed tab running an agent with an agent home
// gets: the variables that point the agent there, the paths its sandbox
// must let it write, and a line to show first in the tab ("" for none).
type agentHome struct {
	env    map[string]string
	paths  []string
	notice string
}

// prepareAgentHome creates agent's home on first use, seeding it from the
// human's files, and says how the tab must start. An agent without a home
// gets the zero agentHome. getenv reads terminald's environment (the
// human's).
func prepareAgentHome(agent string, getenv func(string) string) (agentHome, error) {
	h, ok := config.DefaultAgentHomes()[agent]
	if !ok {
		return agentHome{}, nil
	}
	home := getenv("HOME")
	if !filepath.IsAbs(home) {
		return agentHome{}, fmt.Errorf("agent %s: HOME (%q) is not an absolute path, so its agent home cannot be found", agent, home)
	}
	dir := h.Path(home)
	if err := seedAgentHome(agent, h, dir, home, getenv(h.Var)); err != nil {
		return agentHome{}, err
	}
	out := agentHome{env: map[string]string{h.Var: dir}, paths: []string{dir + "/"}}
	for k, v := range h.Env {
		out.env[k] = v
	}
	if h.Cache != "" {
		cache := getenv("XDG_CACHE_HOME")
		if !filepath.IsAbs(cache) {
			cache = filepath.Join(home, ".cache")
		}
		out.paths = append(out.paths, filepath.Join(cache, h.Cache)+"/")
	}
	if agent == "codex" {
		out.notice = codexDaemonNotice(dir)
	}
	return out, nil
}

// seedAgentHome creates dir (mode 0700, parents too) when it is missing
// and copies the human's files into it: from under humanDir when the human
// sets the agent's variable, else from their usual places under home. A
// file the human lacks is skipped. An existing dir is left alone: it holds
// what the agent wrote since.
func seedAgentHome(agent string, h config.AgentHome, dir, home, humanDir string) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return fmt.Errorf("agent %s: create the directory of agent homes: %w", agent, err)
	}
	if err := os.Mkdir(dir, 0o700); errors.Is(err, fs.ErrExist) {
		return nil
	} else if err != nil {
		return fmt.Errorf("agent %s: create its agent home: %w", agent, err)
	}
	for _, s := range h.Seed {
		from := filepath.Join(home, s.From)
		if filepath.IsAbs(humanDir) {
			from = filepath.Join(humanDir, s.To)
		}
		data, err := os.ReadFile(from)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		} else if err != nil {
			return fmt.Errorf("agent %s: read %s to copy into its agent home: %w", agent, from, err)
		}
		if agent == "codex" && s.To == "config.toml" {
			if data, err = codexNoDaemon(data); err != nil {
				return fmt.Errorf("agent %s: %s: %w", agent, from, err)
			}
		}
		to := filepath.Join(dir, s.To)
		if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
			return fmt.Errorf("agent %s: %w", agent, err)
		}
		if err := os.WriteFile(to, data, 0o600); err != nil {
			return fmt.Errorf("agent %s: copy %s into its agent home: %w", agent, from, err)
		}
	}
	if agent == "codex" && !exists(filepath.Join(dir, "config.toml")) {
		data, _ := codexNoDaemon(nil)
		if err := os.WriteFile(filepath.Join(dir, "config.toml"), data, 0o600); err != nil {
			return fmt.Errorf("agent %s: write its config.toml: %w", agent, err)
		}
	}
	return nil
}

// codexNoDaemon returns Codex's config.toml src with the TUI's background
// server turned off (features.daemon_auto_start = false). That server is
// one per CODEX_HOME: started from one tab, it runs in that tab's sandbox,
// and every later tab's session would run there too. The copy loses the
// file's comments and order, not its settings.
func codexNoDaemon(src []byte) ([]byte, error) {
	doc := map[string]any{}
	if err := toml.Unmarshal(src, &doc); err != nil {
		return nil, fmt.Errorf("not valid TOML: %w", err)
	}
	features, _ := doc["features"].(map[string]any)
	if features == nil {
		features = map[string]any{}
	}
	features["daemon_auto_start"] = false
	doc["features"] = features
	return toml.Marshal(doc)
}

// codexDaemonNotice is the line a Codex tab shows when Codex's background
// server for the agent home dir already runs: Codex would hand this tab's
// session to it, and it runs in whichever tab (or outside Phantom)
// started it. "" when none answers.
func codexDaemonNotice(dir string) string {
	sock := filepath.Join(dir, "app-server-control", "app-server-control.sock")
	c, err := net.DialTimeout("unix", sock, 200*time.Millisecond)
	if err != nil {
		return ""
	}
	c.Close()
	return "phantom: warning: a Codex background server already runs for " + dir +
		" (started by another tab or outside Phantom): sessions it takes run in its sandbox, not this tab's." +
		" Start Codex here with --no-daemon, or stop it: CODEX_HOME=" + dir + " codex app-server daemon stop"
}

// exists reports whether path names anything.
func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// joinLines joins the non-empty lines a and b with CR LF, as a tab's
// notice is written.
func joinLines(a, b string) string {
	if a == "" {
		return b
	}
	if b == "" {
		return a
	}
	return a + "\r\n" + b
}
