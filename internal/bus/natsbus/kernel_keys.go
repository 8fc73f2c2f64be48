package natsbus

import "fmt"

// receiveForKernel has the host receive topics from every host for its
// kernel's own routes (Options.KernelSubscribe), for as long as the
// transport runs: a cancel published on the calling host must reach the
// kernel of the host running the call even when no capsule there
// subscribes to cancels.
func (t *Transport) receiveForKernel(topics []string) error {
	if len(topics) == 0 {
		return nil
	}
	subjects := make([]subKey, 0, len(topics))
	for _, topic := range topics {
		s, err := SubscribeGrant(topic)
		if err != nil {
			return fmt.Errorf("natsbus: the kernel's key: %w", err)
		}
		subjects = append(subjects, subKey{subject: s, queue: t.opts.HostID})
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.want(subjects, 1)
	if err := t.resubscribeLocked(); err != nil {
		return fmt.Errorf("natsbus: receive the kernel's keys: %w", err)
	}
	return nil
}
