package config

import (
	"strings"
	"testing"
)

// TestAttentionSettings checks how each attention field reads, defaults
// and off included, and that a wrong value is refused naming the field.
func TestAttentionSettings(t *testing.T) {
	both, bell, notify, off := Ring{Bell: true, Notify: true}, Ring{Bell: true}, Ring{Notify: true}, Ring{}
	tests := []struct {
		name, body  string
		bellOn      bool
		desktop     bool
		sheet, wait Ring
		finished    Ring
		wantErr     []string
	}{
		{name: "defaults", body: `{}`, bellOn: true, sheet: both, wait: both, finished: both},
		{name: "empty object", body: `{"attention": {}}`, bellOn: true, sheet: both, wait: both, finished: both},
		{name: "all off", body: `{"attention": {"bell": "off", "sheet": "off", "waiting": "off", "finished": "off", "desktop": "off"}}`,
			sheet: off, wait: off, finished: off},
		{name: "mixed", body: `{"attention": {"sheet": "notify", "waiting": "bell", "desktop": "on"}}`,
			bellOn: true, desktop: true, sheet: notify, wait: bell, finished: both},
		{name: "bad bell", body: `{"attention": {"bell": "loud"}}`, wantErr: []string{"attention.bell", `"on" or "off"`, `"loud"`}},
		{name: "bad sheet", body: `{"attention": {"sheet": "on"}}`, wantErr: []string{"attention.sheet", `"bell", "notify", "both" or "off"`, `got "on"`}},
		{name: "bad waiting", body: `{"attention": {"waiting": "Both"}}`, wantErr: []string{"attention.waiting", `"Both"`}},
		{name: "bad finished", body: `{"attention": {"finished": "yes"}}`, wantErr: []string{"attention.finished"}},
		{name: "bad desktop", body: `{"attention": {"desktop": "both"}}`, wantErr: []string{"attention.desktop", `"both"`}},
		{name: "unknown field", body: `{"attention": {"sheets": "off"}}`, wantErr: []string{`"sheets"`, `did you mean "sheet"?`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Load(writeConfig(t, tt.body))
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatalf("Load accepted %s", tt.body)
				}
				for _, s := range tt.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not contain %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			a := c.Attention
			if a.BellOn() != tt.bellOn || a.DesktopOn() != tt.desktop {
				t.Errorf("BellOn, DesktopOn = %v, %v; want %v, %v", a.BellOn(), a.DesktopOn(), tt.bellOn, tt.desktop)
			}
			if a.SheetRing() != tt.sheet || a.WaitingRing() != tt.wait || a.FinishedRing() != tt.finished {
				t.Errorf("rings = %+v %+v %+v; want %+v %+v %+v", a.SheetRing(), a.WaitingRing(), a.FinishedRing(), tt.sheet, tt.wait, tt.finished)
			}
		})
	}
}
