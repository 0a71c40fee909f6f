// Package atomicfile writes a file so that its final name holds either the whole new content or
// what it held before — never a truncated file. Every result file msgbench writes (result.json,
// suite.json, report.html, the figures' CSVs and images, comparison.json, a file:// object
// store's objects) goes through WriteFile: a file cut short by a full disk was left as invalid
// JSON under its final name, and read back later as if it were a result (issue #31).
package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
)

// File is what WriteFile needs of the temporary file (an *os.File); tests give a failing one.
type File interface {
	io.Writer
	Name() string
	Chmod(os.FileMode) error
	Sync() error
	Close() error
}

// createTemp makes the temporary file beside the final one (os.CreateTemp); replaced in tests.
var createTemp = func(dir, pattern string) (File, error) { return os.CreateTemp(dir, pattern) }

// WriteFile writes data to path atomically: a temporary file in path's folder is written, synced
// to disk and closed (each error checked: a full disk may only show at Sync or Close), then
// renamed over path, and the folder synced so the rename lasts. On any error the temporary file is
// removed, path is left as it was (absent or its earlier content), and the error is an
// *os.PathError naming path. The folder must exist.
func WriteFile(path string, data []byte, perm os.FileMode) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := createTemp(dir, "."+base+".tmp-")
	if err != nil {
		return pathError(path, err)
	}
	tmp := f.Name()
	closed := false
	defer func() {
		if err != nil {
			if !closed {
				_ = f.Close()
			}
			_ = os.Remove(tmp)
			err = pathError(path, err)
		}
	}()
	n, err := f.Write(data)
	if err == nil && n < len(data) {
		err = io.ErrShortWrite
	}
	if err != nil {
		return err
	}
	if err := f.Chmod(perm); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	closed = true
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	syncDir(dir)
	return nil
}

// pathError is err as an *os.PathError naming path ("write DIR/result.json: no space left on
// device"), not the temporary file the underlying error may name.
func pathError(path string, err error) error {
	var pe *os.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		err = pe.Err
	case errors.As(err, &le):
		err = le.Err
	}
	return &os.PathError{Op: "write", Path: path, Err: err}
}

// syncDir makes a rename in dir durable; a file system that cannot sync a folder is not an error
// (the file itself is complete either way).
func syncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	_ = d.Sync()
	_ = d.Close()
}
