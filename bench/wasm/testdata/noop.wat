;; The Extism peer of BenchmarkABINoop: a plugin whose export does nothing.
;; Assembled at bench time by wat2wasm (Debian's wabt); never committed as .wasm.
(module
  (memory (export "memory") 1)
  (func (export "noop") (result i32)
    i32.const 0))
