package workspace

// Stopping reports whether Shutdown has begun: the tabs are being hung up
// because Phantom stops (`phantom down`), not handed to the holder. Attach
// asks it to tell the human "Phantom stopped" rather than that the window
// ran out of tabs.
func (w *Workspace) Stopping() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.closing && !w.detached
}
