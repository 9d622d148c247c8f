package main

import (
	"os"
	"slices"
	"strings"

	"github.com/phantom-dev/phantom/internal/agentconf"
	"github.com/phantom-dev/phantom/internal/config"
)

// agentHomeTargets are the user-scope files of the agents named in
// targets as Phantom's agent tabs see them: in each agent home that
// exists (config.DefaultAgentHomes; terminald seeds one from the human's
// files the first time an agent tab runs that agent). install, uninstall
// and status act on them too, so that an entry written after the seeding
// reaches agent tabs. getenv is the human's environment.
func agentHomeTargets(targets []agentconf.Target, getenv func(string) string) []agentconf.Target {
	home := getenv("HOME")
	var out []agentconf.Target
	for name, h := range config.DefaultAgentHomes() {
		if !slices.ContainsFunc(targets, func(t agentconf.Target) bool { return t.Agent.Name == name && t.Project == "" }) {
			continue
		}
		dir := h.Path(home)
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			continue
		}
		env, err := agentconf.EnvFrom(func(k string) string {
			if k == h.Var {
				return dir
			}
			return getenv(k)
		})
		if err != nil {
			continue
		}
		ts, _, err := agentconf.Select([]string{name}, env, "", true)
		if err != nil {
			continue
		}
		out = append(out, ts...)
	}
	slices.SortFunc(out, func(a, b agentconf.Target) int { return strings.Compare(a.Agent.Name, b.Agent.Name) })
	return out
}
