package servers

import (
	"os"
	"path/filepath"
	"strings"
)

// languageOf names the language whose extensions include path's, or "".
func languageOf(configs map[string]Config, path string) string {
	ext := strings.TrimPrefix(filepath.Ext(path), ".")
	if ext == "" {
		return ""
	}
	for lang, c := range configs {
		for _, e := range c.Extensions {
			if e == ext {
				return lang
			}
		}
	}
	return ""
}

// findRoot is the workspace root of a file in dir: the nearest ancestor
// holding a marker of the first group that has one, else dir itself.
func findRoot(markers [][]string, dir string) string {
	for _, group := range markers {
		for d := dir; ; {
			for _, m := range group {
				if _, err := os.Lstat(filepath.Join(d, m)); err == nil {
					return d
				}
			}
			parent := filepath.Dir(d)
			if parent == d {
				break
			}
			d = parent
		}
	}
	return dir
}

// serverID is the id of the server for language at root in the
// confinement keyed key: "go:/src/m" for the human's, "go:/src/m@t3" for
// tab t3's.
func serverID(language, root, key string) string {
	if key == "" {
		return language + ":" + root
	}
	return language + ":" + root + "@" + key
}
