package dispatch

import (
	"fmt"

	"github.com/astrid-go/astrid/ipc"
)

// CheckPublish answers whether capsule may publish on topic, without
// publishing: the host uses it to refuse a failure reply whose topic the
// capsule could never publish on.
func (d *Dispatcher) CheckPublish(capsule, topic string) error {
	c, err := d.lookup(capsule)
	if err != nil {
		return fmt.Errorf("dispatch: check publish %s from capsule %s: %w", topic, capsule, err)
	}
	if c.published.find(topic) != nil {
		// Published before: valid, and allowed while c is registered.
		return nil
	}
	if err := ipc.ValidateTopic(topic); err != nil {
		return fmt.Errorf("dispatch: check publish from capsule %s: %w", c.id, err)
	}
	if !c.publish.allows(topic) {
		return c.publish.deny("publish", topic, c.id)
	}
	return nil
}
