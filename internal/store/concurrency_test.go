package store

import (
	"fmt"
	"strconv"
	"sync"
	"testing"
)

// TestConcurrentNamespaces runs writers and readers for several principals
// at once (under -race) and checks each ends with exactly its own keys.
func TestConcurrentNamespaces(t *testing.T) {
	s := openTemp(t)
	const principals, keys = 4, 25
	var wg sync.WaitGroup
	errs := make(chan error, principals*2)
	for p := range principals {
		kv := s.KV("p"+strconv.Itoa(p), "fs")
		wg.Add(2)
		go func() {
			defer wg.Done()
			for k := range keys {
				if err := kv.Set(strconv.Itoa(k), []byte(strconv.Itoa(p))); err != nil {
					errs <- err
					return
				}
			}
		}()
		go func() {
			defer wg.Done()
			for range keys {
				names, err := kv.List("")
				if err != nil {
					errs <- err
					return
				}
				for _, n := range names {
					if v, _, err := kv.Get(n); err != nil || string(v) != strconv.Itoa(p) {
						errs <- fmt.Errorf("principal %d read %q = %q, %v", p, n, v, err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for p := range principals {
		names, err := s.KV("p"+strconv.Itoa(p), "fs").List("")
		if err != nil || len(names) != keys {
			t.Errorf("principal %d has %d keys, %v; want %d", p, len(names), err, keys)
		}
	}
}
