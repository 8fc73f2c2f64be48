package store

import "fmt"

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

// principalEnvPrefix names, inside the config and secrets buckets, the
// bucket of one principal's own [env] values: no capsule id contains ':',
// so it never meets a capsule's shared values.
const principalEnvPrefix = "principal:"

// PrincipalConfig is principal's own plain [env] values of capsule, which
// the host reads before the capsule-wide ones (Config), the shared
// fallback.
func (s *Store) PrincipalConfig(principal, capsule string) *KV {
	err := validatePrincipal(principal)
	if err == nil {
		err = validateCapsule(capsule)
	}
	label := fmt.Sprintf("config %s/%s", short(principal), short(capsule))
	return &KV{ns: newNamespace(s, label, err, string(bucketConfig), principalEnvPrefix+principal, capsule)}
}

// PrincipalSecrets is principal's own secret [env] values of capsule,
// sealed and bound to both (the additional data names them).
func (s *Store) PrincipalSecrets(principal, capsule string) *Secrets {
	err := validatePrincipal(principal)
	if err == nil {
		err = validateCapsule(capsule)
	}
	return &Secrets{
		ns:      newNamespace(s, fmt.Sprintf("secrets %s/%s", short(principal), short(capsule)), err, string(bucketSecrets), principalEnvPrefix+principal, capsule),
		capsule: principalEnvPrefix + principal + "/" + capsule,
	}
}

// SetPrincipalEnv is SetEnv for principal's own value of key.
func (s *Store) SetPrincipalEnv(principal, capsule, key string, secret bool, value []byte) error {
	if secret {
		if err := s.PrincipalSecrets(principal, capsule).Set(key, value); err != nil {
			return err
		}
		return s.PrincipalConfig(principal, capsule).Delete(key)
	}
	if err := s.PrincipalConfig(principal, capsule).Set(key, value); err != nil {
		return err
	}
	return s.PrincipalSecrets(principal, capsule).Delete(key)
}
