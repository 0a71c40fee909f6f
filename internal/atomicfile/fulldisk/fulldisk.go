// Package fulldisk gives tests a real, nearly full file system: a tmpfs of a few KB, mounted for
// the test and unmounted in its Cleanup. Mounting needs root (and a kernel that allows it here);
// the test is skipped otherwise, as the repository's other root-only tests are.
package fulldisk

import (
	"os"
	"os/exec"
	"strconv"
	"testing"
)

// Mount mounts a tmpfs of size bytes (rounded up to whole pages by the kernel) on a new
// temporary folder and returns it; it is unmounted when the test ends.
func Mount(t testing.TB, size int) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: mounts a tiny tmpfs to fill")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+strconv.Itoa(size), "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs (%v): %s", err, out)
	}
	// Registered after TempDir's: runs first, so the folder is unmounted before it is removed.
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// Fill writes a file in dir until the file system is full but for about leave bytes.
func Fill(t testing.TB, dir string, leave int) {
	t.Helper()
	f, err := os.CreateTemp(dir, "filler-")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 512)
	for {
		if _, err := f.Write(chunk); err != nil {
			break
		}
	}
	// Free leave bytes again (tmpfs counts whole pages).
	if st, err := f.Stat(); err == nil && leave > 0 {
		_ = f.Truncate(max(st.Size()-int64(leave), 0))
	}
}
