//go:build race

package manifest_test

// raceDetector says the tests run under -race (make test's first pass).
const raceDetector = true
