package atomicfile

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// diskFile is an *os.File that behaves like one on a file system with room for limit bytes: a
// write past it is short with ENOSPC (what a full disk does); or whose Sync or Close fails.
type diskFile struct {
	*os.File
	limit             int
	written           int
	quiet             bool // a short write without an error
	syncErr, closeErr error
}

func (f *diskFile) Write(p []byte) (int, error) {
	room := f.limit - f.written
	if room >= len(p) {
		n, err := f.File.Write(p)
		f.written += n
		return n, err
	}
	n, _ := f.File.Write(p[:max(room, 0)])
	f.written += n
	if f.quiet {
		return n, nil
	}
	return n, syscall.ENOSPC
}

func (f *diskFile) Sync() error {
	if f.syncErr != nil {
		return f.syncErr
	}
	return f.File.Sync()
}

func (f *diskFile) Close() error {
	err := f.File.Close()
	if f.closeErr != nil {
		return f.closeErr
	}
	return err
}

func withDisk(t *testing.T, mk func(*os.File) *diskFile) {
	t.Helper()
	old := createTemp
	createTemp = func(dir, pattern string) (File, error) {
		f, err := os.CreateTemp(dir, pattern)
		if err != nil {
			return nil, err
		}
		return mk(f), nil
	}
	t.Cleanup(func() { createTemp = old })
}

// TestWriteFile: the whole content under the final name, with the permissions asked for, and no
// temporary file left.
func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "result.json")
	data := bytes.Repeat([]byte("x"), 10000)
	if err := WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(p)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes (%v), want %d", len(got), err, len(data))
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", st.Mode().Perm())
	}
	if err := WriteFile(p, []byte("second\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(p); string(got) != "second\n" {
		t.Errorf("replaced content %q", got)
	}
	onlyFiles(t, dir, "result.json")
}

// TestWriteFileFailures: a disk full after 4,096 bytes (issue #31: result.json was left cut at
// 4,096 bytes), or a failing Sync or Close, is an error naming the file, and leaves neither a
// truncated file under the final name nor a temporary file; an earlier file keeps its content.
func TestWriteFileFailures(t *testing.T) {
	data := bytes.Repeat([]byte("y"), 10000)
	for _, tc := range []struct {
		name string
		mk   func(*os.File) *diskFile
		want error
	}{
		{"full disk", func(f *os.File) *diskFile { return &diskFile{File: f, limit: 4096} }, syscall.ENOSPC},
		{"short write without error", func(f *os.File) *diskFile { return &diskFile{File: f, limit: 4096, quiet: true} }, io.ErrShortWrite},
		{"sync fails", func(f *os.File) *diskFile { return &diskFile{File: f, limit: 1 << 30, syncErr: syscall.EIO} }, syscall.EIO},
		{"close fails", func(f *os.File) *diskFile { return &diskFile{File: f, limit: 1 << 30, closeErr: syscall.EDQUOT} }, syscall.EDQUOT},
	} {
		t.Run(tc.name, func(t *testing.T) {
			withDisk(t, tc.mk)
			for _, earlier := range []bool{false, true} {
				dir := t.TempDir()
				p := filepath.Join(dir, "result.json")
				if earlier {
					if err := os.WriteFile(p, []byte("earlier\n"), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				err := WriteFile(p, data, 0o644)
				var pe *os.PathError
				if err == nil || !errors.Is(err, tc.want) || !errors.As(err, &pe) || pe.Path != p || strings.Contains(err.Error(), ".tmp-") {
					t.Fatalf("err %v, want %v naming %s (not the temporary file)", err, tc.want, p)
				}
				if earlier {
					if got, _ := os.ReadFile(p); string(got) != "earlier\n" {
						t.Errorf("the earlier file holds %q", got)
					}
					onlyFiles(t, dir, "result.json")
				} else {
					onlyFiles(t, dir)
				}
			}
		})
	}
}

// TestWriteFileNoFolder: a missing folder is an error naming the file.
func TestWriteFileNoFolder(t *testing.T) {
	p := filepath.Join(t.TempDir(), "missing", "suite.json")
	if err := WriteFile(p, []byte("{}"), 0o644); err == nil || !strings.Contains(err.Error(), p) {
		t.Errorf("err %v", err)
	}
}

func onlyFiles(t *testing.T, dir string, want ...string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Errorf("%s holds %v, want %v", dir, names, want)
	}
}
