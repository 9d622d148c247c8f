package peercred

import "testing"

func TestVouchRoundTrip(t *testing.T) {
	line := VouchLine(4242, 99)
	if !IsVouch(line) {
		t.Fatalf("IsVouch(%q) = false", line)
	}
	pid, start, err := ParseVouch(line)
	if err != nil || pid != 4242 || start != 99 {
		t.Errorf("ParseVouch(%q) = %d, %d, %v; want 4242, 99", line, pid, start, err)
	}
	for _, bad := range []string{
		`{"vouch":"phantom","pid":0,"start":1}`,
		`{"vouch":"other","pid":5,"start":1}`,
		`{"vouch":"phantom","pid":5,"start":1,"tab":"t1"}`,
		`{"vouch":`,
		`{"hello":"phantom"}`,
	} {
		if _, _, err := ParseVouch([]byte(bad)); err == nil {
			t.Errorf("ParseVouch(%s) took it", bad)
		}
	}
}

func FuzzParseVouch(f *testing.F) {
	f.Add(VouchLine(1, 2))
	f.Add([]byte(`{"vouch":"phantom","pid":-1}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		pid, start, err := ParseVouch(line)
		if err != nil {
			return
		}
		if pid <= 0 {
			t.Fatalf("ParseVouch(%q) took pid %d", line, pid)
		}
		if p2, s2, err := ParseVouch(VouchLine(pid, start)); err != nil || p2 != pid || s2 != start {
			t.Fatalf("round trip of %d, %d: %d, %d, %v", pid, start, p2, s2, err)
		}
	})
}
