// Package image builds small container images without a container engine or registry: one
// layer of files from this machine on an empty base, written as a docker-archive tarball that
// `docker load`, `ctr images import`, `kind load image-archive` and `podman load` all accept.
// hack/images.sh uses it (through hack/imagebuild) for the msgbench, Mosquitto, RabbitMQ, Artemis
// and pause images; debian.go gathers what an installed Debian package needs.
//
// Images are reproducible: every file and the image config carry one fixed timestamp, so the
// same inputs give the same digest.
package image

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// File is one file of the image: a regular file whose content comes from Src (a file on this
// machine, symlinks followed) or Data, or a symbolic link to Link.
type File struct {
	Path string // absolute path inside the image
	Src  string
	Data []byte
	Mode int64  // permission bits; 0 means 0o644, or 0o755 when Src is executable
	Link string // when set, the file is a symbolic link with this target (as written: relative or absolute)
}

// Spec describes an image.
type Spec struct {
	Files []File
	// Dirs are created even when empty (mode 0o755, or 0o1777 for /tmp).
	Dirs       []string
	Entrypoint []string
	Cmd        []string
	Env        []string
	User       string // "uid:gid"
	WorkingDir string
	Labels     map[string]string
	// Created stamps files and the config; the zero time means 1970-01-01 (reproducible).
	Created time.Time
	// Arch is the GOARCH the files are built for; "" means this machine's.
	Arch string
}

// Build assembles the image.
func Build(s Spec) (v1.Image, error) {
	layer, err := Layer(s)
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.DockerManifestSchema2), layer)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	arch := s.Arch
	if arch == "" {
		arch = runtime.GOARCH
	}
	created := s.Created.UTC()
	if s.Created.IsZero() {
		created = time.Unix(0, 0).UTC()
	}
	cf.OS, cf.Architecture = "linux", arch
	cf.Created = v1.Time{Time: created}
	cf.Config = v1.Config{
		Entrypoint: s.Entrypoint,
		Cmd:        s.Cmd,
		Env:        s.Env,
		User:       s.User,
		WorkingDir: s.WorkingDir,
		Labels:     s.Labels,
	}
	cf.History = []v1.History{{Created: v1.Time{Time: created}, CreatedBy: "msgbench internal/image", Comment: "files from the build machine"}}
	return mutate.ConfigFile(img, cf)
}

// Layer is the image's single layer: the files and directories of s, parents included.
func Layer(s Spec) (v1.Layer, error) {
	data, err := layerTar(s)
	if err != nil {
		return nil, err
	}
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil },
		tarball.WithMediaType(types.DockerLayer))
}

func layerTar(s Spec) ([]byte, error) {
	mtime := s.Created
	if mtime.IsZero() {
		mtime = time.Unix(0, 0)
	}
	dirs := map[string]bool{}
	addParents := func(p string) {
		for d := path.Dir(p); d != "/" && d != "."; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	files := map[string]File{}
	for _, f := range s.Files {
		p := path.Clean(f.Path)
		if !path.IsAbs(p) {
			return nil, fmt.Errorf("image: file path %q is not absolute", f.Path)
		}
		if _, dup := files[p]; dup {
			return nil, fmt.Errorf("image: %s given twice", p)
		}
		f.Path = p
		files[p] = f
		addParents(p)
	}
	for _, d := range s.Dirs {
		d = path.Clean(d)
		dirs[d] = true
		addParents(d)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, d := range sortedKeys(dirs) {
		if _, isFile := files[d]; isFile {
			return nil, fmt.Errorf("image: %s is both a file and a directory", d)
		}
		mode := int64(0o755)
		if d == "/tmp" {
			mode = 0o1777
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: strings.TrimPrefix(d, "/") + "/", Mode: mode,
			ModTime: mtime, Format: tar.FormatPAX}); err != nil {
			return nil, err
		}
	}
	for _, p := range sortedKeys(files) {
		f := files[p]
		if f.Link != "" {
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: strings.TrimPrefix(p, "/"), Linkname: f.Link,
				Mode: 0o777, ModTime: mtime, Format: tar.FormatPAX}); err != nil {
				return nil, err
			}
			continue
		}
		data, mode := f.Data, f.Mode
		if f.Src != "" {
			st, err := os.Stat(f.Src)
			if err != nil {
				return nil, err
			}
			if !st.Mode().IsRegular() {
				return nil, fmt.Errorf("image: %s is not a regular file", f.Src)
			}
			if data, err = os.ReadFile(f.Src); err != nil {
				return nil, err
			}
			if mode == 0 && st.Mode().Perm()&0o111 != 0 {
				mode = 0o755
			}
		}
		if mode == 0 {
			mode = 0o644
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: strings.TrimPrefix(p, "/"), Mode: mode,
			Size: int64(len(data)), ModTime: mtime, Format: tar.FormatPAX}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// WriteArchive writes img as a docker-archive tarball tagged with every tag (e.g.
// ghcr.io/msgbench/msgbench:v0.1.0). The file appears atomically.
func WriteArchive(file string, img v1.Image, tags ...string) error {
	if len(tags) == 0 {
		return fmt.Errorf("image: no tag for %s", file)
	}
	refs := map[name.Reference]v1.Image{}
	for _, t := range tags {
		tag, err := name.NewTag(t, name.StrictValidation)
		if err != nil {
			return fmt.Errorf("image: tag %q: %w", t, err)
		}
		refs[tag] = img
	}
	tmp := file + ".tmp"
	if err := tarball.MultiRefWriteToFile(tmp, refs); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, file)
}

// Passwd returns /etc/passwd and /etc/group files with root and one more user, whose home is
// home and whose shell does not exist (the images have none).
func Passwd(user string, uid int, home string) []File {
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\n%s:x:%d:%d:%s:%s:/sbin/nologin\n", user, uid, uid, user, home)
	group := fmt.Sprintf("root:x:0:\n%s:x:%d:\n", user, uid)
	return []File{{Path: "/etc/passwd", Data: []byte(passwd)}, {Path: "/etc/group", Data: []byte(group)}}
}

// SharedLibraries lists the shared libraries a dynamically linked binary loads, found with
// ldd(1) on this machine, as image files at the paths ldd reports (the dynamic loader
// included; symlinks are resolved to their content).
func SharedLibraries(binary string) ([]File, error) {
	out, err := exec.Command("ldd", binary).CombinedOutput()
	if strings.Contains(string(out), "not a dynamic executable") {
		return nil, nil // static: nothing to add
	}
	if err != nil {
		return nil, fmt.Errorf("ldd %s: %w: %s", binary, err, bytes.TrimSpace(out))
	}
	return parseLdd(string(out))
}

func parseLdd(out string) ([]File, error) {
	var files []File
	seen := map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "linux-vdso") || strings.HasPrefix(line, "linux-gate") {
			continue
		}
		if strings.Contains(line, "not found") {
			return nil, fmt.Errorf("ldd: %s", line)
		}
		if strings.Contains(line, "statically linked") || strings.Contains(line, "not a dynamic executable") {
			return nil, nil
		}
		var p string
		if _, after, ok := strings.Cut(line, "=> "); ok {
			p = strings.Fields(after)[0]
		} else {
			p = strings.Fields(line)[0] // the loader: /lib64/ld-linux-x86-64.so.2 (0x…)
		}
		if !path.IsAbs(p) {
			return nil, fmt.Errorf("ldd: cannot read %q", line)
		}
		if !seen[p] {
			seen[p] = true
			files = append(files, File{Path: p, Src: p, Mode: 0o755})
		}
	}
	return files, nil
}
