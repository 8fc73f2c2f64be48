// Package clock owns the kernel's cheap reading of the current time for hot
// paths: envelope stamps, rate limiters, CPU accounting. It must not be used
// where a caller needs to see a step of the system's wall clock at once.
package clock
