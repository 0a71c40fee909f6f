package image

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os/exec"
	"reflect"
	"strings"
	"testing"
)

func TestParseDepends(t *testing.T) {
	got := ParseDepends("adduser, erlang-base | erlang-base-hipe, erlang-crypto (>= 1:24.0), python3:any, libc6 (>= 2.34) [amd64]")
	want := [][]string{{"adduser"}, {"erlang-base", "erlang-base-hipe"}, {"erlang-crypto"}, {"python3"}, {"libc6"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if got := ParseDepends(", "); len(got) != 0 {
		t.Errorf("empty field: %v", got)
	}
}

func TestUnneeded(t *testing.T) {
	for p, want := range map[string]bool{"/usr/share/doc/x/copyright": true, "/etc/init.d/rabbitmq-server": true, "/usr/share/docs": false,
		"/usr/lib/erlang/bin/erl": false, "/lib/systemd/system/x.service": true} {
		if Unneeded(p) != want {
			t.Errorf("Unneeded(%s) = %v", p, !want)
		}
	}
}

// A link stays a link in the layer, with its target as written.
func TestLayerKeepsSymlinks(t *testing.T) {
	data, err := layerTar(Spec{Files: []File{{Path: "/usr/bin/dash", Data: []byte("x"), Mode: 0o755}, {Path: "/bin/sh", Link: "/usr/bin/dash"}}})
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(bytes.NewReader(data))
	found := false
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Name == "bin/sh" {
			found = h.Typeflag == tar.TypeSymlink && h.Linkname == "/usr/bin/dash"
		}
	}
	if !found {
		t.Error("bin/sh is not a link to /usr/bin/dash")
	}
}

// The shell of this machine needs libc and the loader; ldd's answer becomes image files.
func TestLibrariesOfTheShell(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	libs, missing, err := Libraries([]File{{Path: "/bin/sh", Src: sh}, {Path: "/etc/x", Data: []byte("not ELF")}})
	if err != nil || len(missing) != 0 {
		t.Fatal(err, missing)
	}
	var libc bool
	for _, l := range libs {
		libc = libc || strings.Contains(l.Path, "libc.so")
	}
	if !libc {
		t.Errorf("no libc among %v", libs)
	}
	// what files already hold is not added again
	again, _, err := Libraries(append([]File{{Path: "/bin/sh", Src: sh}}, libs...))
	if err != nil || len(again) != 0 {
		t.Errorf("libraries added twice: %v %v", again, err)
	}
}

func TestMergeFirstWins(t *testing.T) {
	got := Merge([]File{{Path: "/a", Data: []byte("1")}}, []File{{Path: "/a/", Data: []byte("2")}, {Path: "/b"}})
	if len(got) != 2 || string(got[0].Data) != "1" {
		t.Errorf("%+v", got)
	}
}
