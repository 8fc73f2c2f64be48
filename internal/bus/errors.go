package bus

import "errors"

var (
	// ErrTooLarge is returned by Publish for an envelope over Options.MaxMessage.
	ErrTooLarge = errors.New("bus: message too large")
	// ErrClosed is returned once the bus, route or ring has been closed.
	ErrClosed = errors.New("bus: closed")
)
