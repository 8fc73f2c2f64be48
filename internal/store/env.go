package store

// SetEnv stores the [env] value of key for capsule, in exactly one place:
// sealed among its secrets when secret, else in its plain configuration
// (the other place's copy, if any, is deleted).
func (s *Store) SetEnv(capsule, key string, secret bool, value []byte) error {
	if secret {
		if err := s.Secrets(capsule).Set(key, value); err != nil {
			return err
		}
		return s.Config(capsule).Delete(key)
	}
	if err := s.Config(capsule).Set(key, value); err != nil {
		return err
	}
	return s.Secrets(capsule).Delete(key)
}
