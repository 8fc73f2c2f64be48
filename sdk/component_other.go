//go:build !wasip1

package sdk

func callComponent(string, string, []byte) ([]byte, error) { return nil, errNoComponents }
