package image

import (
	"archive/tar"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

func TestArchiveReadsBack(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "tool")
	if err := os.WriteFile(bin, []byte("#!binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	spec := Spec{
		Files:      append(Passwd("nonroot", 65532, "/home/nonroot"), File{Path: "/usr/bin/tool", Src: bin}, File{Path: "/etc/x.conf", Data: []byte("x")}),
		Dirs:       []string{"/tmp"},
		Entrypoint: []string{"/usr/bin/tool"},
		User:       "65532:65532",
	}
	img, err := Build(spec)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "img.tar")
	if err := WriteArchive(file, img, "ghcr.io/msgbench/test:1", "ghcr.io/msgbench/test:latest"); err != nil {
		t.Fatal(err)
	}
	tag, _ := name.NewTag("ghcr.io/msgbench/test:latest")
	back, err := tarball.ImageFromPath(file, &tag)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := back.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.Config.User != "65532:65532" || cf.Config.Entrypoint[0] != "/usr/bin/tool" || cf.OS != "linux" || cf.Architecture == "" {
		t.Errorf("config: %+v", cf)
	}
	layers, err := back.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers: %v %v", layers, err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rc.Close() }()
	got := map[string]int64{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Uid != 0 || h.ModTime.Unix() != 0 {
			t.Errorf("%s: uid %d mtime %v", h.Name, h.Uid, h.ModTime)
		}
		got[h.Name] = h.Mode
	}
	want := map[string]int64{"etc/": 0o755, "etc/passwd": 0o644, "etc/group": 0o644, "etc/x.conf": 0o644, "tmp/": 0o1777,
		"usr/": 0o755, "usr/bin/": 0o755, "usr/bin/tool": 0o755}
	for k, m := range want {
		if got[k] != m {
			t.Errorf("%s: mode %o, want %o (entries %v)", k, got[k], m, got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("entries %v, want %v", got, want)
	}

	// Reproducible: the same inputs give the same digest.
	again, err := Build(spec)
	if err != nil {
		t.Fatal(err)
	}
	d1, _ := img.Digest()
	d2, _ := again.Digest()
	if d1 != d2 {
		t.Errorf("digests differ: %s %s", d1, d2)
	}
}

func TestSpecErrors(t *testing.T) {
	for _, s := range []Spec{
		{Files: []File{{Path: "relative", Data: nil}}},
		{Files: []File{{Path: "/a", Data: nil}, {Path: "/a", Data: nil}}},
		{Files: []File{{Path: "/a", Data: nil}}, Dirs: []string{"/a"}},
		{Files: []File{{Path: "/a", Src: "/nonexistent/file"}}},
	} {
		if _, err := Build(s); err == nil {
			t.Errorf("Build(%+v) succeeded", s)
		}
	}
	img, err := Build(Spec{})
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteArchive(filepath.Join(t.TempDir(), "x.tar"), img); err == nil {
		t.Error("WriteArchive without a tag succeeded")
	}
	if err := WriteArchive(filepath.Join(t.TempDir(), "x.tar"), img, "Not A Tag"); err == nil {
		t.Error("WriteArchive with a bad tag succeeded")
	}
}

func TestParseLdd(t *testing.T) {
	out := `	linux-vdso.so.1 (0x00007ffd)
	libssl.so.3 => /lib/x86_64-linux-gnu/libssl.so.3 (0x00007f7f)
	libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f7e)
	/lib64/ld-linux-x86-64.so.2 (0x00007f7f2027d000)
`
	files, err := parseLdd(out)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range files {
		paths = append(paths, f.Path)
	}
	if got := strings.Join(paths, " "); got != "/lib/x86_64-linux-gnu/libssl.so.3 /lib/x86_64-linux-gnu/libc.so.6 /lib64/ld-linux-x86-64.so.2" {
		t.Errorf("paths %s", got)
	}
	if _, err := parseLdd("\tlibfoo.so.1 => not found\n"); err == nil {
		t.Error("a missing library was not reported")
	}
	if files, err := parseLdd("\tnot a dynamic executable\n\tstatically linked\n"); err != nil || files != nil {
		t.Errorf("static: %v %v", files, err)
	}
}

// TestMosquittoRunsFromItsLibraries puts Debian's mosquitto and the libraries ldd finds into an
// empty root and runs it there as uid 1883: what the Mosquitto image holds is enough.
func TestMosquittoRunsFromItsLibraries(t *testing.T) {
	const bin = "/usr/sbin/mosquitto"
	if _, err := os.Stat(bin); err != nil {
		t.Skip("mosquitto is not installed (hack/apt-packages.sh mosquitto)")
	}
	if os.Geteuid() != 0 {
		t.Skip("chroot needs root")
	}
	libs, err := SharedLibraries(bin)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range append(libs, File{Path: bin, Src: bin}) {
		data, err := os.ReadFile(f.Src)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(root, f.Path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin, "-h")
	cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: root, Credential: &syscall.Credential{Uid: 1883, Gid: 1883}}
	cmd.Dir = "/"
	out, _ := cmd.CombinedOutput() // -h exits non-zero
	if !strings.Contains(string(out), "mosquitto version") {
		t.Fatalf("mosquitto in a root of its libraries: %s", out)
	}
}
