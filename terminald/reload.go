package terminald

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/phantom-dev/phantom/internal/config"
	"github.com/phantom-dev/phantom/internal/filewatch"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
	"github.com/phantom-dev/phantom/terminald/attach"
	"github.com/phantom-dev/phantom/terminald/workspace"
)

// or events (a queue overflow).
const (
	configSettle    = 20 * time.Millisecond
	configPollEvery = 2 * time.Second
)

// restartOnly are the settings (config.json field names) read by other
// daemons at their start: gitd's worktree_root and lspd's
// language_servers. Every other setting applies live — to attached
// clients at once, to tabs opened from then on.
var restartOnly = []string{"language_servers", "worktree_root"}

// restartHint is what to run for a restart-only setting to take effect.
const restartHint = "phantom down && phantom up"

// configReloader applies config.json while terminald runs: on every
// change of the file and on `phantom reload` (the ConfigService).
type configReloader struct {
	terminalv1.UnimplementedConfigServiceServer
	dir    string
	ws     *workspace.Workspace
	live   *attach.Live
	logger *slog.Logger

	mu      sync.Mutex
	started config.Config // what the running daemons started with
	loaded  config.Config // the file's last good settings, applied
	errText string        // why the file is refused now; "" when applied
}

// reloadResult is what one reload did.
type reloadResult struct {
	applied []string // settings changed live
	restart []string // settings that differ from what the daemons started with
	err     error    // the file was refused; nothing changed
}

// newConfigReloader follows the settings of dir, which ws runs with now.
// The workspace's settings are replaced only when the file changes, so
// that settings given by hand (tests, embedders) stay until then.
func newConfigReloader(dir string, ws *workspace.Workspace, logger *slog.Logger) *configReloader {
	cfg := ws.Config()
	loaded, err := config.Load(dir)
	if err != nil {
		loaded = cfg
	}
	return &configReloader{dir: dir, ws: ws, logger: logger, started: cfg, loaded: loaded,
		live: attach.NewLive(attach.NewSettings(cfg))}
}

// reload reads config.json and applies it. An invalid file changes
// nothing: the last good settings stay, and every attached client is told
// why (once per distinct cause, since the poll re-reads it).
func (r *configReloader) reload() reloadResult {
	r.mu.Lock()
	defer r.mu.Unlock()
	cur := r.loaded
	next, err := config.Load(r.dir)
	if err != nil {
		if err.Error() != r.errText {
			r.errText = err.Error()
			r.logger.Warn("config.json not applied; the last good settings stay", "err", err)
			// The status line is short: the cause, without the path.
			cause := err
			var fe *config.FileError
			if errors.As(err, &fe) {
				cause = fe.Err
			}
			settings, _ := r.live.Current()
			r.live.Set(settings, attach.Notice{Text: "config.json not applied: " + cause.Error(), Sticky: true})
		}
		return reloadResult{err: err, restart: r.pending(cur)}
	}
	applied := changedFields(cur, next)
	applied = slices.DeleteFunc(applied, func(f string) bool { return slices.Contains(restartOnly, f) })
	restart := r.pending(next)
	wasRefused := r.errText != ""
	r.errText = ""
	if len(applied) == 0 && !wasRefused && slices.Equal(restart, r.pending(cur)) {
		return reloadResult{restart: restart} // nothing new (the poll, an unchanged save)
	}
	r.loaded = next
	r.ws.SetConfig(next)
	r.live.Set(attach.NewSettings(next), reloadNotice(next, applied, restart))
	r.logger.Info("config.json applied", "applied", applied, "needs_restart", restart)
	return reloadResult{applied: applied, restart: restart}
}

// reloadNotice tells attached clients what a reload did: what waits for a
// restart (sticky: it holds until then), else what it applied — the new
// prefix by name, since the old one no longer works.
func reloadNotice(c config.Config, applied, restart []string) attach.Notice {
	if len(restart) > 0 {
		return attach.Notice{Text: "config.json: " + strings.Join(restart, ", ") + " change only after " + restartHint, Sticky: true}
	}
	if len(applied) == 0 {
		return attach.Notice{}
	}
	names := slices.Clone(applied)
	if i := slices.Index(names, "prefix"); i >= 0 {
		p, _ := config.ParsePrefix(c.Prefix)
		names[i] = "prefix (now " + config.KeyName(string(rune(p))) + ")"
	}
	return attach.Notice{Text: "config.json applied: " + strings.Join(names, ", ")}
}

// pending lists the restart-only settings in which c differs from what
// the daemons started with.
func (r *configReloader) pending(c config.Config) []string {
	return slices.DeleteFunc(changedFields(r.started, c), func(f string) bool { return !slices.Contains(restartOnly, f) })
}

// changedFields lists the config.json fields in which a and b differ.
func changedFields(a, b config.Config) []string {
	var out []string
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	for i := range va.NumField() {
		if !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			name, _, _ := strings.Cut(va.Type().Field(i).Tag.Get("json"), ",")
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// ReloadConfig is `phantom reload`: re-read config.json now.
func (r *configReloader) ReloadConfig(context.Context, *terminalv1.ReloadConfigRequest) (*terminalv1.ReloadConfigResponse, error) {
	res := r.reload()
	resp := &terminalv1.ReloadConfigResponse{Path: config.Path(r.dir), Applied: res.applied, NeedsRestart: res.restart}
	if res.err != nil {
		resp.Error = res.err.Error()
	}
	return resp, nil
}

// watch follows config.json until ctx ends and reloads it on every
// change (see filewatch for how changes are seen).
func (r *configReloader) watch(ctx context.Context) {
	filewatch.Follow(ctx, filewatch.Spec{
		Path:    filepath.Join(r.dir, config.FileName),
		What:    "config.json",
		Changed: func() { r.reload() },
		Logger:  r.logger,
	})
}
