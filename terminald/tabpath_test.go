package terminald

import (
	"slices"
	"testing"
)

func TestTabEnviron(t *testing.T) {
	tests := []struct {
		name string
		env  []string
		exe  string
		want []string
	}{
		{"prepended", []string{"HOME=/h", "PATH=/usr/bin:/bin"}, "/opt/ph/bin/phantom",
			[]string{"HOME=/h", "PATH=/opt/ph/bin:/usr/bin:/bin"}},
		{"already first", []string{"PATH=/opt/ph/bin:/usr/bin"}, "/opt/ph/bin/phantom",
			[]string{"PATH=/opt/ph/bin:/usr/bin"}},
		{"moved to the front", []string{"PATH=/usr/bin:/opt/ph/bin/:/bin"}, "/opt/ph/bin/phantom",
			[]string{"PATH=/opt/ph/bin:/usr/bin:/bin"}},
		{"PATH unset", []string{"HOME=/h"}, "/opt/ph/bin/phantom",
			[]string{"HOME=/h", "PATH=/opt/ph/bin:" + defaultPath}},
		{"empty PATH entry kept (the current directory)", []string{"PATH=/usr/bin::/bin"}, "/p/phantom",
			[]string{"PATH=/p:/usr/bin::/bin"}},
		{"no binary", []string{"PATH=/usr/bin"}, "", []string{"PATH=/usr/bin"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := slices.Clone(tt.env)
			if got := tabEnviron(tt.env, tt.exe); !slices.Equal(got, tt.want) {
				t.Errorf("tabEnviron(%q, %q) = %q, want %q", tt.env, tt.exe, got, tt.want)
			}
			if !slices.Equal(in, tt.env) {
				t.Errorf("tabEnviron changed its input to %q", tt.env)
			}
		})
	}
}
