//go:build !linux

package main

// secret cannot turn echo off here; the caller reads the value another
// way (readEnvValue, which says the value will show).
func (t *operatorTerminal) secret() (string, bool, error) { return "", false, nil }
