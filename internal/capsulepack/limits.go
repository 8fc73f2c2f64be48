package capsulepack

// Default bounds of one archive (the installer's own: internal/install
// copies at most 1 GiB, 100000 files).
const (
	DefaultMaxBytes = 1 << 30
	DefaultMaxFiles = 10_000
)

// Limits bound what Read accepts; zero fields take the defaults.
type Limits struct {
	// MaxBytes bounds the sum of the files' declared sizes.
	MaxBytes int64
	// MaxFiles bounds the number of entries.
	MaxFiles int
}

func (l Limits) maxBytes() int64 {
	if l.MaxBytes > 0 {
		return l.MaxBytes
	}
	return DefaultMaxBytes
}

func (l Limits) maxFiles() int {
	if l.MaxFiles > 0 {
		return l.MaxFiles
	}
	return DefaultMaxFiles
}
