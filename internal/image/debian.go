package image

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// Images of Debian's RabbitMQ and JRE are the packages' files as dpkg installed them on this
// machine, plus the shared libraries their ELF files load: the same bits the local brokers of
// the tests run, with no base image and no package manager inside.

// DebianDependencies returns pkg and, transitively, the installed packages it depends on
// (Depends and Pre-Depends) whose names follow accepts — e.g. RabbitMQ's erlang-* packages,
// but not adduser or logrotate, which only its maintainer scripts use. Of alternatives
// ("erlang-base | erlang-base-hipe") the first installed one counts.
func DebianDependencies(pkg string, follow func(name string) bool) ([]string, error) {
	seen := map[string]bool{}
	queue := []string{pkg}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if seen[p] {
			continue
		}
		out, err := exec.Command("dpkg-query", "-W", "-f", "${Status}\n${Depends}, ${Pre-Depends}\n", p).Output()
		if err != nil || !strings.HasPrefix(string(out), "install ok installed") {
			return nil, fmt.Errorf("the Debian package %s is not installed", p)
		}
		seen[p] = true
		_, deps, _ := strings.Cut(string(out), "\n")
		for _, alts := range ParseDepends(deps) {
			for _, a := range alts {
				if !follow(a) {
					continue
				}
				if installed(a) {
					queue = append(queue, a)
					break
				}
			}
		}
	}
	return sortedKeys(seen), nil
}

func installed(pkg string) bool {
	out, err := exec.Command("dpkg-query", "-W", "-f", "${Status}", pkg).Output()
	return err == nil && strings.HasPrefix(string(out), "install ok installed")
}

// ParseDepends splits a Debian Depends field into its alternatives, names only:
// "a (>= 1), b | c:any" gives [[a] [b c]].
func ParseDepends(field string) [][]string {
	var out [][]string
	for _, group := range strings.Split(field, ",") {
		var alts []string
		for _, a := range strings.Split(group, "|") {
			a = strings.TrimSpace(a)
			if i := strings.IndexAny(a, " ([<"); i >= 0 {
				a = a[:i]
			}
			a, _, _ = strings.Cut(a, ":")
			if a != "" {
				alts = append(alts, a)
			}
		}
		if len(alts) > 0 {
			out = append(out, alts)
		}
	}
	return out
}

// Unneeded is true for what a package installs that no container ever reads: documentation,
// manual pages, init scripts and unit files, logrotate and shell-completion files.
func Unneeded(p string) bool {
	for _, prefix := range []string{"/usr/share/doc", "/usr/share/man", "/usr/share/lintian", "/usr/share/bash-completion",
		"/usr/share/zsh", "/etc/init.d", "/etc/default", "/etc/logrotate.d", "/lib/systemd", "/usr/lib/systemd", "/usr/lib/debug"} {
		if p == prefix || strings.HasPrefix(p, prefix+"/") {
			return true
		}
	}
	return false
}

// DebianFiles lists the files the installed packages put on this machine (dpkg -L) as image
// files at the same paths, symbolic links kept as links, leaving out what skip accepts. Dirs are
// the packages' directories (some must exist even when empty).
func DebianFiles(pkgs []string, skip func(path string) bool) (files []File, dirs []string, err error) {
	seen := map[string]bool{}
	for _, pkg := range pkgs {
		out, err := exec.Command("dpkg", "-L", pkg).Output()
		if err != nil {
			return nil, nil, fmt.Errorf("dpkg -L %s: %w", pkg, err)
		}
		for _, p := range strings.Split(string(out), "\n") {
			p = path.Clean(strings.TrimSpace(p))
			if !path.IsAbs(p) || p == "/" || seen[p] || skip(p) {
				continue
			}
			seen[p] = true
			if mergedUsr[p] {
				// a link to usr/… on a merged-/usr machine; in the image a directory like any
				// other, so that files ldd finds under /lib stay plain files
				dirs = append(dirs, p)
				continue
			}
			f, dir, err := hostFile(p, p)
			switch {
			case os.IsNotExist(err):
				continue // removed by the admin (e.g. an excluded path-exclude of dpkg.cfg.d)
			case err != nil:
				return nil, nil, err
			case dir:
				dirs = append(dirs, p)
			default:
				files = append(files, f)
			}
		}
	}
	return files, dirs, nil
}

var mergedUsr = map[string]bool{"/bin": true, "/sbin": true, "/lib": true, "/lib32": true, "/lib64": true, "/libx32": true}

// hostFile describes the file at src on this machine as the image file dst.
func hostFile(src, dst string) (f File, dir bool, err error) {
	st, err := os.Lstat(src)
	if err != nil {
		return File{}, false, err
	}
	switch {
	case st.IsDir():
		return File{}, true, nil
	case st.Mode()&fs.ModeSymlink != 0:
		target, err := os.Readlink(src)
		return File{Path: dst, Link: target}, false, err
	case st.Mode().IsRegular():
		return File{Path: dst, Src: src, Mode: int64(st.Mode().Perm())}, false, nil
	}
	return File{}, false, fmt.Errorf("image: %s is neither a file, a directory nor a symbolic link", src)
}

// Tree lists the directory src of this machine as image files under dst (links kept as links).
func Tree(src, dst string) (files []File, dirs []string, err error) {
	err = filepath.WalkDir(src, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := path.Join(dst, filepath.ToSlash(rel))
		f, dir, err := hostFile(p, target)
		switch {
		case err != nil:
			return err
		case dir:
			dirs = append(dirs, target)
		default:
			files = append(files, f)
		}
		return nil
	})
	return files, dirs, err
}

// LinkTargets returns the regular files of this machine that links among files point to with an
// absolute target that no file provides (Debian's JRE links its configuration into
// /etc/java-17-openjdk, and lib/security/cacerts into ca-certificates-java's store).
func LinkTargets(files []File) ([]File, error) {
	have := map[string]bool{}
	for _, f := range files {
		have[f.Path] = true
	}
	var out []File
	for _, f := range files {
		if !path.IsAbs(f.Link) || have[f.Link] {
			continue
		}
		st, err := os.Stat(f.Link)
		if err != nil || !st.Mode().IsRegular() {
			continue // dangling here too: it stays dangling in the image
		}
		have[f.Link] = true
		out = append(out, File{Path: f.Link, Src: f.Link, Mode: int64(st.Mode().Perm())})
	}
	return out, nil
}

// Libraries returns the shared libraries (ldd) of every ELF file among files that have a Src,
// except those already among files. A library ldd cannot find is fine when one of files has its
// name (the JRE's libjvm.so, which its other libraries find through the launcher); any other is
// listed in missing as "file: library" — loading that file fails in the image as it would here
// (the JRE's sound or image libraries on a machine without them).
func Libraries(files []File) (libs []File, missing []string, err error) {
	have, names := map[string]bool{}, map[string]bool{}
	for _, f := range files {
		have[f.Path] = true
		names[path.Base(f.Path)] = true
	}
	for _, f := range files {
		if f.Src == "" || !isELF(f.Src) {
			continue
		}
		out, lerr := exec.Command("ldd", f.Src).CombinedOutput()
		if bytes.Contains(out, []byte("not a dynamic executable")) || bytes.Contains(out, []byte("statically linked")) {
			continue
		}
		if lerr != nil {
			return nil, nil, fmt.Errorf("ldd %s: %w: %s", f.Src, lerr, bytes.TrimSpace(out))
		}
		var found []string
		for _, line := range strings.Split(string(out), "\n") {
			name, _, notFound := strings.Cut(strings.TrimSpace(line), " => not found")
			switch {
			case !notFound:
				found = append(found, line)
			case !names[name]:
				missing = append(missing, f.Path+": "+name)
			}
		}
		ls, err := parseLdd(strings.Join(found, "\n"))
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", f.Src, err)
		}
		for _, l := range ls {
			if !have[l.Path] {
				have[l.Path] = true
				libs = append(libs, l)
			}
		}
	}
	sort.Slice(libs, func(i, j int) bool { return libs[i].Path < libs[j].Path })
	return libs, missing, nil
}

func isELF(file string) bool {
	f, err := os.Open(file)
	if err != nil {
		return false
	}
	defer func() { _ = f.Close() }()
	magic := make([]byte, 4)
	_, err = io.ReadFull(f, magic)
	return err == nil && string(magic) == "\x7fELF"
}

// Merge joins lists of files, the first of two with the same path winning (a package file and
// the same library found by ldd are one file).
func Merge(lists ...[]File) []File {
	seen := map[string]bool{}
	var out []File
	for _, l := range lists {
		for _, f := range l {
			p := path.Clean(f.Path)
			if !seen[p] {
				seen[p] = true
				out = append(out, f)
			}
		}
	}
	return out
}
